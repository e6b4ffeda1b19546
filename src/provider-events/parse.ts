/**
 * What a provider's event means for us (D-62, issue 7), read from the stored payload: a payment to
 * record, a failed payment, a subscription status, or nothing. Each provider's wire format is read
 * here and nowhere else; the worker applies the result the same way for all three.
 */
import { createHash } from 'node:crypto';
import { unstorableTextPaths } from '../http/validate.ts';
import { DECIMAL_PATTERN, fromMinorUnits, minorUnits, money } from '../money.ts';
import { exactInCurrency } from '../money-input.ts';
import type { SubscriptionStatus } from '../subscriptions/repo.ts';
import type { Provider } from './verify.ts';

export type ProviderEffect =
  | { kind: 'payment'; invoiceId: string | undefined; amount: string; currency: string; reference: string }
  /** A payment event whose own status says the money has not arrived (a delayed method): nothing is paid. */
  | { kind: 'not_paid'; invoiceId: string | undefined; reason: string }
  | { kind: 'payment_failed'; invoiceId: string | undefined; subscriptionId: string | undefined; reason: string }
  | { kind: 'subscription_status'; subscriptionId: string | undefined; status: SubscriptionStatus }
  | { kind: 'none' };

/**
 * The envelope every stored event has: its id (unique per provider), type, time, and the subscription a status event is
 * about.
 */
export interface EventEnvelope {
  eventId: string;
  eventType: string;
  occurredAt: Date | null;
  subjectId: string | null;
}

/** A payload the provider signed but that cannot be one of its events. */
export class MalformedEventError extends Error {}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new MalformedEventError(`the event has no ${what}`);
  return value;
}

/**
 * An amount a provider says it took must be one it can have taken: above zero and exact in its currency
 * (D-91). Anything else can never be recorded, whatever is retried: the event is failed at once, and
 * nothing is rounded into the books (a "10.005" USD credited as 10.01).
 */
function paidAmount(amount: string, currency: string, what: string): string {
  if (!money(amount).gt(0))
    throw new MalformedEventError(`${what} ${amount} ${currency} is not an amount paid: it must be above zero`);
  if (!exactInCurrency(amount, currency))
    throw new MalformedEventError(`${what} ${amount} has more decimals than ${currency} has (${minorUnits(currency)})`);
  return amount;
}

function minor(value: unknown, currency: string, what: string): string {
  const text = need(str(value), what);
  if (!/^\d+$/.test(text)) throw new MalformedEventError(`${what} must be an integer amount in minor units`);
  return paidAmount(fromMinorUnits(text, currency), currency, what);
}

function decimal(value: unknown, currency: string, what: string): string {
  const text = need(str(value), what);
  if (!DECIMAL_PATTERN.test(text)) throw new MalformedEventError(`${what} must be a decimal amount`);
  return paidAmount(text, currency, what);
}

const currencyOf = (value: unknown) => need(str(value), 'currency').toUpperCase();

/**
 * Whether a payment event's money has arrived, by its own status field. `required`: the event's type does not
 * say paid by itself (provider_a `checkout.session.completed` also completes when a delayed method, such as a
 * bank debit, has only been started; provider_c `order_created` also creates pending and failed orders), so a
 * missing status is malformed. Otherwise the type says paid and only a status saying otherwise refuses it.
 * Answers the reason it is not paid, or undefined when it is.
 */
function notPaidReason(value: unknown, paid: readonly string[], what: string, required: boolean): string | undefined {
  const status = str(value);
  if (status === undefined && required) throw new MalformedEventError(`the event has no ${what}`);
  if (status === undefined || paid.includes(status)) return undefined;
  return `${what} is "${status}": the money has not arrived, nothing is paid`;
}

const PROVIDER_A_STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  unpaid: 'past_due',
  canceled: 'canceled',
  paused: 'paused',
};
const PROVIDER_C_STATUS: Record<string, SubscriptionStatus> = {
  on_trial: 'trialing',
  active: 'active',
  paused: 'paused',
  past_due: 'past_due',
  unpaid: 'past_due',
  cancelled: 'canceled',
  expired: 'canceled',
};

function statusFrom(map: Record<string, SubscriptionStatus>, value: unknown): SubscriptionStatus {
  const status = need(str(value), 'status');
  const ours = map[status];
  if (!ours) throw new MalformedEventError(`unknown subscription status "${status}"`);
  return ours;
}

function providerAEnvelope(body: Json): EventEnvelope {
  const object = obj(obj(body.data).object);
  const created = typeof body.created === 'number' ? validDate(new Date(body.created * 1000), 'created') : null;
  const subjectId =
    body.type === 'customer.subscription.updated' ? (str(obj(object.metadata).subscriptionId) ?? null) : null;
  return { eventId: need(str(body.id), 'id'), eventType: need(str(body.type), 'type'), occurredAt: created, subjectId };
}

/**
 * A checkout session's payment: one per payment intent, whichever event carries it (the completion of a paid
 * session, or the later success of a delayed one), so both arriving record it once (applyProviderPayment).
 */
function providerACheckoutPayment(object: Json, statusRequired: boolean): ProviderEffect {
  const invoiceId = str(obj(object.metadata).invoiceId);
  const reason = notPaidReason(object.payment_status, ['paid'], 'payment_status', statusRequired);
  if (reason) return { kind: 'not_paid', invoiceId, reason };
  const currency = currencyOf(object.currency);
  return {
    kind: 'payment',
    invoiceId,
    amount: minor(object.amount_total, currency, 'amount_total'),
    currency,
    reference: need(str(object.payment_intent), 'payment_intent'),
  };
}

function providerAEffect(body: Json): ProviderEffect {
  const object = obj(obj(body.data).object);
  const metadata = obj(object.metadata);
  switch (body.type) {
    case 'checkout.session.completed':
      return providerACheckoutPayment(object, true);
    case 'checkout.session.async_payment_succeeded':
      return providerACheckoutPayment(object, false);
    case 'checkout.session.async_payment_failed':
      return {
        kind: 'payment_failed',
        invoiceId: str(metadata.invoiceId),
        subscriptionId: str(metadata.subscriptionId),
        reason: 'the delayed payment of a provider_a checkout failed',
      };
    case 'invoice.paid': {
      const reason = notPaidReason(object.status, ['paid'], 'status', false);
      if (reason) return { kind: 'not_paid', invoiceId: str(metadata.invoiceId), reason };
      const currency = currencyOf(object.currency);
      return {
        kind: 'payment',
        invoiceId: str(metadata.invoiceId),
        amount: minor(object.amount_paid, currency, 'amount_paid'),
        currency,
        reference: need(str(object.payment_intent), 'payment_intent'),
      };
    }
    case 'invoice.payment_failed': {
      const error = obj(object.last_payment_error);
      const reason =
        str(error.message) ?? str(error.code) ?? str(object.failure_reason) ?? 'provider_a reported the payment failed';
      return {
        kind: 'payment_failed',
        invoiceId: str(metadata.invoiceId),
        subscriptionId: str(metadata.subscriptionId),
        reason,
      };
    }
    case 'customer.subscription.updated':
      return {
        kind: 'subscription_status',
        subscriptionId: str(metadata.subscriptionId),
        status: statusFrom(PROVIDER_A_STATUS, object.status),
      };
    default:
      return { kind: 'none' };
  }
}

function providerBEnvelope(body: Json): EventEnvelope {
  return {
    eventId: need(str(body.id), 'id'),
    eventType: need(str(body.event), 'event'),
    occurredAt: null,
    subjectId: null,
  };
}

function providerBEffect(body: Json): ProviderEffect {
  const data = obj(body.data);
  if (body.event !== 'invoices.paid') return { kind: 'none' };
  // PAID, or SETTLED once the funds reached the merchant's balance: both mean the customer paid.
  const reason = notPaidReason(data.status, ['PAID', 'SETTLED'], 'status', false);
  if (reason) return { kind: 'not_paid', invoiceId: str(data.external_id), reason };
  const currency = currencyOf(data.currency);
  return {
    kind: 'payment',
    invoiceId: str(data.external_id),
    amount: decimal(data.paid_amount ?? data.amount, currency, 'paid_amount'),
    currency,
    reference: need(str(data.id), 'data.id'),
  };
}

function providerCEnvelope(body: Json, raw: Buffer): EventEnvelope {
  const meta = obj(body.meta);
  const attributes = obj(obj(body.data).attributes);
  const at = str(attributes.updated_at) ?? str(attributes.created_at);
  const occurredAt = at && !Number.isNaN(Date.parse(at)) ? new Date(at) : null;
  // provider_c's events carry no id: the body's digest is one (a resent event is the same bytes).
  const eventType = need(str(meta.event_name), 'meta.event_name');
  const subjectId =
    eventType === 'subscription_created' || eventType === 'subscription_updated'
      ? (str(obj(meta.custom_data).subscription_id) ?? null)
      : null;
  return { eventId: createHash('sha256').update(raw).digest('hex'), eventType, occurredAt, subjectId };
}

function providerCEffect(body: Json): ProviderEffect {
  const meta = obj(body.meta);
  const custom = obj(meta.custom_data);
  const data = obj(body.data);
  const attributes = obj(data.attributes);
  switch (meta.event_name) {
    case 'order_created':
    case 'subscription_payment_success': {
      // An order is also created pending or failed; a subscription payment's success says paid by itself.
      const reason = notPaidReason(
        attributes.status,
        ['paid'],
        'attributes.status',
        meta.event_name === 'order_created',
      );
      if (reason) return { kind: 'not_paid', invoiceId: str(custom.invoice_id), reason };
      const currency = currencyOf(attributes.currency);
      return {
        kind: 'payment',
        invoiceId: str(custom.invoice_id),
        amount: minor(attributes.total, currency, 'attributes.total'),
        currency,
        reference: need(str(data.id), 'data.id'),
      };
    }
    case 'subscription_created':
    case 'subscription_updated':
      return {
        kind: 'subscription_status',
        subscriptionId: str(custom.subscription_id),
        status: statusFrom(PROVIDER_C_STATUS, attributes.status),
      };
    default:
      return { kind: 'none' };
  }
}

/** The longest event id or type accepted (the document says so: provider-events/schema.ts). */
export const MAX_ENVELOPE_TEXT = 255;

const MAX_DEPTH = 64;

/** A time the event states must be one (a `created` of 1e300 is not an event). */
function validDate(date: Date, what: string): Date {
  if (Number.isNaN(date.getTime())) throw new MalformedEventError(`${what} is not a time`);
  return date;
}

/** Whether `value` nests objects or arrays deeper than `limit`; iterative, so any depth is safe to ask about. */
function depthOver(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const item of Object.values(current)) stack.push([item, depth + 1]);
  }
  return false;
}

/** Reads the envelope of a verified body; throws MalformedEventError when it is not JSON or lacks its id/type. */
export function readEnvelope(provider: Provider, raw: Buffer): { body: Json; envelope: EventEnvelope } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new MalformedEventError('the body is not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new MalformedEventError('the body is not a JSON object');
  // Stored as jsonb: text PostgreSQL cannot hold, or nesting no provider sends, is not an event (not a 500).
  if (unstorableTextPaths(parsed).length > 0)
    throw new MalformedEventError('the body holds NUL characters or unpaired UTF-16 surrogates');
  if (depthOver(parsed, MAX_DEPTH)) throw new MalformedEventError(`the body is nested deeper than ${MAX_DEPTH} levels`);
  const body = parsed as Json;
  const envelope =
    provider === 'provider_a'
      ? providerAEnvelope(body)
      : provider === 'provider_b'
        ? providerBEnvelope(body)
        : providerCEnvelope(body, raw);
  // Real ids and types are short; a huge one is not an event, and would not fit the (provider, event_id) index.
  for (const [what, value] of [
    ['id', envelope.eventId],
    ['type', envelope.eventType],
  ] as const) {
    if (value.length > MAX_ENVELOPE_TEXT)
      throw new MalformedEventError(`the event ${what} is longer than ${MAX_ENVELOPE_TEXT} characters`);
  }
  return { body, envelope };
}

/** The effect of a stored event; throws MalformedEventError when a handled type lacks what it needs. */
export function effectOf(provider: Provider, body: unknown): ProviderEffect {
  const json = obj(body);
  return provider === 'provider_a'
    ? providerAEffect(json)
    : provider === 'provider_b'
      ? providerBEffect(json)
      : providerCEffect(json);
}
