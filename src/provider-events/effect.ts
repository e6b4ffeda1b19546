/**
 * What a provider's event means for us (D-62, issue 7), read from the stored payload: a payment to
 * record, a failed payment, a subscription status, or nothing. The worker applies the result the same way for
 * all three providers.
 */
import { DECIMAL_PATTERN, fromMinorUnits, minorUnits, money } from '../money.ts';
import { exactInCurrency } from '../money-input.ts';
import type { SubscriptionStatus } from '../subscriptions/repo.ts';
import { type Json, MalformedEventError, need, obj, str } from './parse.ts';
import type { Provider } from './verify.ts';

export type ProviderEffect =
  | { kind: 'payment'; invoiceId: string | undefined; amount: string; currency: string; reference: string }
  /** A payment event whose own status says the money has not arrived (a delayed method): nothing is paid. */
  | { kind: 'not_paid'; invoiceId: string | undefined; reason: string }
  | { kind: 'payment_failed'; invoiceId: string | undefined; subscriptionId: string | undefined; reason: string }
  | { kind: 'subscription_status'; subscriptionId: string | undefined; status: SubscriptionStatus }
  | { kind: 'none' };
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
/** The effect of a stored event; throws MalformedEventError when a handled type lacks what it needs. */
export function effectOf(provider: Provider, body: unknown): ProviderEffect {
  const json = obj(body);
  return provider === 'provider_a'
    ? providerAEffect(json)
    : provider === 'provider_b'
      ? providerBEffect(json)
      : providerCEffect(json);
}
