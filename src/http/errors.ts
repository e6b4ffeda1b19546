/**
 * The closed list of error codes the service answers with (D-1), each with its HTTP status.
 * Domains add their codes here so the whole contract reads in one place.
 */
export const errorStatus = {
  /** Malformed JSON, schema failures, bad query parameters. */
  invalid_request: 400,
  /** A provider webhook whose signature is missing, malformed, expired or wrong (D-62); nothing is stored. */
  invalid_signature: 400,
  /** A referenced id in the body does not exist (D-2). */
  customer_not_found: 400,
  product_not_found: 400,
  plan_not_found: 400,
  invoice_not_found: 400,
  payment_not_found: 400,
  /** Unknown setting key in PUT /api/settings. */
  unknown_setting: 400,
  /** No, expired or unknown session or key. */
  unauthenticated: 401,
  /** Login with a wrong email or password (same answer for both). */
  invalid_credentials: 401,
  /** Missing or wrong X-Cron-Secret. */
  invalid_cron_secret: 401,
  /** Authenticated but not allowed (a non-admin role). */
  forbidden: 403,
  /** Unknown route, unknown or malformed id in the path. */
  not_found: 404,
  /** Generic duplicate. */
  conflict: 409,
  /** Customer email already used, case-insensitively (D-22). */
  email_taken: 409,
  /** Product referenced by plans, subscriptions or licenses (D-21). */
  product_in_use: 409,
  /** Customer with invoices or payments (D-22). */
  customer_has_billing_history: 409,
  /** Customer still referenced by other records (e.g. licenses) whose foreign keys refuse the delete. */
  customer_in_use: 409,
  /** An invoice status change D-52 does not allow. */
  invalid_status_transition: 409,
  /** A payment or checkout on a draft or void invoice (D-54, D-61). */
  invoice_not_payable: 409,
  /** Voiding an invoice that has payments (refund or credit-note it instead). */
  invoice_has_payments: 409,
  /** A credit note on a draft or void invoice (D-58). */
  invoice_not_creditable: 409,
  /** (paymentMethod, providerReference) already recorded (D-54). */
  duplicate_payment: 409,
  /** A provider_a payment recorded without providerReference: the provider cannot be asked to refund it (D-55). */
  payment_not_refundable: 409,
  /** The customer already has this (type, providerMethodId) stored (D-56). */
  duplicate_payment_method: 409,
  /** A payment amount of 0 or less, or above the amount due (D-54 names one code for both). */
  amount_exceeds_due: 400,
  /** A refund amount of 0 or less, or above what is left to refund (D-55). */
  amount_exceeds_refundable: 400,
  /** Credit notes above the invoice total (D-58). */
  amount_exceeds_invoice: 400,
  /** A subscription's billingCycle differs from its plan's (D-41). */
  billing_cycle_mismatch: 400,
  /** A plan change across currencies (D-45). */
  currency_mismatch: 400,
  /** A plan change to the plan already in use. */
  same_plan: 400,
  /** An inactive plan cannot start subscriptions. */
  plan_inactive: 400,
  /** An unknown, expired, exhausted or foreign-currency coupon (D-46). */
  invalid_coupon: 400,
  /** Coupon codes are unique case-insensitively (D-46). */
  coupon_code_taken: 409,
  /** A canceled subscription is final (D-44). */
  subscription_canceled: 409,
  /** A referenced subscription does not exist. */
  subscription_not_found: 400,
  /** A revoked license is final (D-32). */
  license_revoked: 409,
  /** Same Idempotency-Key with a different request (D-6). */
  idempotency_key_reused: 409,
  /** Same Idempotency-Key while the first request still runs (D-6). */
  request_in_progress: 409,
  /** JSON body over 1 MiB. */
  payload_too_large: 413,
  /** A body that is not JSON. */
  unsupported_media_type: 415,
  /** Too many requests; carries Retry-After. */
  rate_limited: 429,
  /** Anything unexpected; never carries the underlying message. */
  internal_error: 500,
  /** The lifecycle sweep a cron call waited for failed (D-80); its error is in the logs and lifecycle_runs. */
  lifecycle_run_failed: 500,
  /** A payment provider failed. */
  provider_error: 502,
  /** The identity provider failed or is unreachable. */
  identity_provider_error: 502,
  /** The database is unreachable. */
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error class of the service: a code from the list above, a message safe to show, optional details. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  /** Extra response headers, e.g. Retry-After for rate limits. */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.details = options.details;
    this.headers = options.headers;
  }
}

export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found`);
