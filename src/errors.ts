/**
 * The closed list of error codes the service answers with (D-1), each documented where it is defined.
 * Services throw AppError with one of them and know nothing of HTTP: the status of each code is decided
 * at the edge (`http/error-status.ts`).
 */
export const ERROR_CODES = [
  /** Malformed JSON, schema failures, bad query parameters. */
  'invalid_request',
  /**
   * An amount with more decimals than its currency's minor unit (D-91: "1.999" USD, "10.5" JPY): refused
   * rather than rounded, naming the field.
   */
  'invalid_amount',
  /**
   * The process cannot start (D-93): a port in use, a data folder held by another running instance, an
   * unreachable database. The message names the cause and the variable to change; never answered over HTTP.
   */
  'setup_failed',
  /** A provider webhook whose signature is missing, malformed, expired or wrong (D-62); nothing is stored. */
  'invalid_signature',
  /** A referenced id in the body does not exist (D-2). */
  'customer_not_found',
  'product_not_found',
  'plan_not_found',
  'invoice_not_found',
  'payment_not_found',
  /** Unknown setting key in PUT /api/settings. */
  'unknown_setting',
  /** No, expired or unknown session or key. */
  'unauthenticated',
  /** Login with a wrong email or password (same answer for both). */
  'invalid_credentials',
  /** Missing or wrong X-Cron-Secret. */
  'invalid_cron_secret',
  /** Authenticated but not allowed (a non-admin role). */
  'forbidden',
  /** Unknown route, unknown or malformed id in the path. */
  'not_found',
  /**
   * A known path asked with a method it does not take (PATCH on a customer, DELETE on the settings): the answer's
   * `Allow` header lists the methods it takes (issue 33; before, a 404 said the path did not exist).
   */
  'method_not_allowed',
  /** Generic duplicate. */
  'conflict',
  /** Customer email already used, case-insensitively (D-22). */
  'email_taken',
  /** Product referenced by plans, subscriptions or licenses (D-21). */
  'product_in_use',
  /** Customer with invoices or payments (D-22). */
  'customer_has_billing_history',
  /** Customer still referenced by other records (e.g. licenses) whose foreign keys refuse the delete. */
  'customer_in_use',
  /** An invoice status change D-52 does not allow. */
  'invalid_status_transition',
  /** A payment or checkout on a draft or void invoice (D-54, D-61). */
  'invoice_not_payable',
  /** Voiding an invoice that has payments (refund or credit-note it instead). */
  'invoice_has_payments',
  /** A credit note on a draft or void invoice (D-58). */
  'invoice_not_creditable',
  /** (paymentMethod, providerReference) already recorded (D-54). */
  'duplicate_payment',
  /** A provider_a payment recorded without providerReference: the provider cannot be asked to refund it (D-55). */
  'payment_not_refundable',
  /** The customer already has this (type, providerMethodId) stored (D-56). */
  'duplicate_payment_method',
  /** A payment amount above the amount due (D-54; an amount of 0 or less is an invalid_request naming it). */
  'amount_exceeds_due',
  /** A refund amount above what is left to refund (D-55; 0 or less is an invalid_request naming it). */
  'amount_exceeds_refundable',
  /** Credit notes above the invoice total (D-58). */
  'amount_exceeds_invoice',
  /** A subscription's billingCycle differs from its plan's (D-41). */
  'billing_cycle_mismatch',
  /** A plan change across currencies (D-45). */
  'currency_mismatch',
  /** A plan change to the plan already in use. */
  'same_plan',
  /** An inactive plan cannot start subscriptions. */
  'plan_inactive',
  /** A tax rate a body names does not exist (D-2, T-2). */
  'tax_rate_not_found',
  /** A tax rate a body names is archived: it applies to no new invoice (T-1, T-2). */
  'tax_rate_inactive',
  /** A customer's testClockId that names no test clock (TC-2). */
  'test_clock_not_found',
  /**
   * TC-3: a test clock advance to a time not after the clock's, or while the clock is advancing (one advance at a
   * time, the other is refused).
   */
  'clock_not_advanceable',
  /** TC-6: `billing.test_clocks_enabled` is false (a production deployment switched test clocks off). */
  'test_clocks_disabled',
  /**
   * TC-5: a test clock customer's default payment method is none of the test methods (`pm_card_visa`,
   * `pm_card_chargeDeclined`): the charge is declined with this reason, recorded as a charge's; never an HTTP answer.
   */
  'test_clock_no_test_method',
  /** An unknown, expired, exhausted or foreign-currency coupon (D-46). */
  'invalid_coupon',
  /**
   * A provider whose secret is unset (D-92): a set-up state, not a provider failure. The message names the
   * variable to set; an inbound webhook answered so is retried by its provider.
   */
  'provider_not_configured',
  /** Coupon codes are unique case-insensitively (D-46). */
  'coupon_code_taken',
  /** A billable metric's code is taken (U-2). */
  'metric_code_taken',
  /** A billable metric a plan's charge uses cannot be deleted, nor its aggregation or field changed (U-2). */
  'metric_in_use',
  /** A canceled subscription is final (D-44). */
  'subscription_canceled',
  /** A referenced subscription does not exist. */
  'subscription_not_found',
  /** A revoked license is final (D-32); a license file is not written for it (D-101). */
  'license_revoked',
  /** A license file is not written for a suspended license (D-101, D-34's code). */
  'license_suspended',
  /** A license file is not written for an expired license (D-101, D-34's code). */
  'license_expired',
  /** A device's license file asked for by a device not activated on that license: it validates first (D-101). */
  'device_not_activated',
  /**
   * A license key no license has, on the public license endpoints that answer error objects (D-101 checkout: D-34's
   * code).
   */
  'license_not_found',
  /** Same Idempotency-Key with a different request (D-6). */
  'idempotency_key_reused',
  /** Same Idempotency-Key while the first request still runs (D-6). */
  'request_in_progress',
  /** JSON body over 1 MiB. */
  'payload_too_large',
  /** A body that is not JSON. */
  'unsupported_media_type',
  /** Too many requests; carries Retry-After. */
  'rate_limited',
  /** Anything unexpected; never carries the underlying message. */
  'internal_error',
  /** The lifecycle sweep a cron call waited for failed (D-80); its error is in the logs and lifecycle_runs. */
  'lifecycle_run_failed',
  /** A payment provider failed. */
  'provider_error',
  /** The identity provider failed or is unreachable. */
  'identity_provider_error',
  /** The database is unreachable. */
  'unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error class of the service: a code from the list above, a message safe to show, optional details. */
export class AppError extends Error {
  readonly code: ErrorCode;
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
    this.details = options.details;
    this.headers = options.headers;
  }
}

export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found`);

/** How a refusal of a request's fields begins, the schema's (http/validate.ts) and a service's alike. */
export const FIELDS_REFUSED = 'Some fields need correcting';

/** A service's refusal of fields the schema let through, worded as the schema's: `<path>: <message>` each. */
export const fieldsRefused = (details: ErrorDetail[]) =>
  new AppError('invalid_request', `${FIELDS_REFUSED}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, {
    details,
  });
