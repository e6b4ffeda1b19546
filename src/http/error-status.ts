import type { AppError, ErrorCode } from '../errors.ts';

/** The HTTP status each error code answers with (D-1): the one place a code meets HTTP. */
export const errorStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_amount: 400,
  invalid_signature: 400,
  customer_not_found: 400,
  product_not_found: 400,
  plan_not_found: 400,
  invoice_not_found: 400,
  payment_not_found: 400,
  unknown_setting: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  invalid_cron_secret: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  email_taken: 409,
  product_in_use: 409,
  customer_has_billing_history: 409,
  customer_in_use: 409,
  invalid_status_transition: 409,
  invoice_not_payable: 409,
  invoice_has_payments: 409,
  invoice_not_creditable: 409,
  duplicate_payment: 409,
  payment_not_refundable: 409,
  duplicate_payment_method: 409,
  amount_exceeds_due: 400,
  amount_exceeds_refundable: 400,
  amount_exceeds_invoice: 400,
  billing_cycle_mismatch: 400,
  currency_mismatch: 400,
  same_plan: 400,
  plan_inactive: 400,
  tax_rate_not_found: 400,
  tax_rate_inactive: 400,
  invalid_coupon: 400,
  coupon_code_taken: 409,
  metric_code_taken: 409,
  metric_in_use: 409,
  subscription_canceled: 409,
  subscription_not_found: 400,
  license_revoked: 409,
  license_suspended: 409,
  license_expired: 409,
  device_not_activated: 409,
  license_not_found: 404,
  idempotency_key_reused: 409,
  request_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  setup_failed: 500,
  lifecycle_run_failed: 500,
  provider_error: 502,
  identity_provider_error: 502,
  unavailable: 503,
  provider_not_configured: 503,
};

/**
 * The body an error answers with (D-1), `{error: {code, message, details}}`: rendered by the web app's error
 * middleware, and stored by idempotency to replay it.
 */
export function errorBody(error: AppError) {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}
