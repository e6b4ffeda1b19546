/**
 * provider_a's API (D-60): form-encoded POSTs with the secret key as a Bearer token and an
 * Idempotency-Key, JSON answers. Hosted checkout sessions, off-session payment intents for auto-charge,
 * and refunds.
 */
import type { Config } from '../config.ts';
import { toMinorUnits } from '../money.ts';
import { callProvider, ProviderCallError, stringField, type ProviderAnswer } from './call.ts';

export type ProviderAConfig = Pick<Config, 'PROVIDER_A_API_URL' | 'PROVIDER_A_SECRET_KEY'>;

export interface ProviderAOptions {
  timeoutMs?: number;
}

function post(
  config: ProviderAConfig,
  what: string,
  path: string,
  form: Record<string, string>,
  idempotencyKey: string,
  options: ProviderAOptions,
): Promise<{ answer: ProviderAnswer }> {
  if (!config.PROVIDER_A_SECRET_KEY)
    throw new ProviderCallError('provider_a is not configured (PROVIDER_A_SECRET_KEY is not set)', { definite: true });
  return callProvider({
    provider: 'provider_a',
    what,
    url: `${config.PROVIDER_A_API_URL.replace(/\/+$/, '')}${path}`,
    headers: {
      Authorization: `Bearer ${config.PROVIDER_A_SECRET_KEY}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      'Idempotency-Key': idempotencyKey,
    },
    body: new URLSearchParams(form),
    timeoutMs: options.timeoutMs,
  });
}

function requireId(answer: ProviderAnswer, what: string): string {
  const id = stringField(answer, 'id');
  if (!id) throw new ProviderCallError(`provider_a answered without a ${what} id`, { definite: false });
  return id;
}

export interface CheckoutSessionInput {
  invoiceId: string;
  invoiceNumber: string;
  amount: string;
  currency: string;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

/** `POST /v1/checkout/sessions` in payment mode for the amount due; answers the hosted page. */
export async function createProviderACheckout(
  config: ProviderAConfig,
  input: CheckoutSessionInput,
  options: ProviderAOptions = {},
): Promise<{ id: string; url: string }> {
  const { answer } = await post(
    config,
    'checkout session',
    '/v1/checkout/sessions',
    {
      mode: 'payment',
      'line_items[0][price_data][currency]': input.currency.toLowerCase(),
      'line_items[0][price_data][unit_amount]': toMinorUnits(input.amount, input.currency),
      'line_items[0][price_data][product_data][name]': `Invoice ${input.invoiceNumber}`,
      'line_items[0][quantity]': '1',
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
      'metadata[invoiceId]': input.invoiceId,
    },
    input.idempotencyKey,
    options,
  );
  const url = stringField(answer, 'url');
  if (!url) throw new ProviderCallError('provider_a answered without a checkout url', { definite: false });
  return { id: requireId(answer, 'checkout session'), url };
}

export type ChargeOutcome =
  | { status: 'succeeded'; paymentIntentId: string }
  | { status: 'declined'; paymentIntentId: string | null; reason: string };

export interface OffSessionChargeInput {
  invoiceId: string;
  amount: string;
  currency: string;
  providerMethodId: string;
  idempotencyKey: string;
}

function declineReason(answer: ProviderAnswer | undefined, fallback: string): string {
  const error = answer?.last_payment_error as { message?: unknown; code?: unknown } | undefined;
  if (typeof error?.message === 'string') return error.message;
  if (typeof error?.code === 'string') return error.code;
  return fallback;
}

/**
 * `POST /v1/payment_intents` confirmed off-session with a stored method (D-83). A card decline
 * (HTTP 402, or a 4xx naming a card error, or an intent that did not succeed) is a `declined`
 * outcome; an unknown outcome (timeout, 5xx) throws ProviderCallError with definite false.
 */
export async function chargeProviderAOffSession(
  config: ProviderAConfig,
  input: OffSessionChargeInput,
  options: ProviderAOptions = {},
): Promise<ChargeOutcome> {
  let answer: ProviderAnswer;
  try {
    ({ answer } = await post(
      config,
      'payment',
      '/v1/payment_intents',
      {
        amount: toMinorUnits(input.amount, input.currency),
        currency: input.currency.toLowerCase(),
        payment_method: input.providerMethodId,
        off_session: 'true',
        confirm: 'true',
        'metadata[invoiceId]': input.invoiceId,
      },
      input.idempotencyKey,
      options,
    ));
  } catch (error) {
    if (error instanceof ProviderCallError && error.definite)
      return { status: 'declined', paymentIntentId: null, reason: error.message };
    throw error;
  }
  const id = requireId(answer, 'payment intent');
  if (answer.status === 'succeeded') return { status: 'succeeded', paymentIntentId: id };
  return {
    status: 'declined',
    paymentIntentId: id,
    reason: declineReason(answer, `payment intent ${String(answer.status ?? 'not succeeded')}`),
  };
}

/** `POST /v1/refunds` of part or all of a payment intent; a failed or canceled refund is a definite refusal. */
export async function refundProviderA(
  config: ProviderAConfig,
  input: { paymentIntentId: string; amount: string; currency: string; idempotencyKey: string },
  options: ProviderAOptions = {},
): Promise<{ id: string }> {
  const { answer } = await post(
    config,
    'refund',
    '/v1/refunds',
    { payment_intent: input.paymentIntentId, amount: toMinorUnits(input.amount, input.currency) },
    input.idempotencyKey,
    options,
  );
  const id = requireId(answer, 'refund');
  if (answer.status === 'failed' || answer.status === 'canceled') {
    const reason = typeof answer.failure_reason === 'string' ? `: ${answer.failure_reason}` : '';
    throw new ProviderCallError(`provider_a refund ${id} ${answer.status}${reason}`, { definite: true });
  }
  return { id };
}
