/** Signs and posts provider events the way each provider does (D-62, interface.md Authentication 5). */
import { createHmac } from 'node:crypto';
import { request, type JsonResponse } from './http.ts';

export const PROVIDER_SECRETS = {
  PROVIDER_A_WEBHOOK_SECRET: 'whsec_a_test',
  PROVIDER_B_CALLBACK_TOKEN: 'cbtoken_b_test',
  PROVIDER_C_WEBHOOK_SECRET: 'signing_c_test',
};

export const hmacHex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');

/** provider_a's header: `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`. */
export function providerASignature(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmacHex(secret, `${timestamp}.${body}`)}`;
}

export interface PostOptions {
  secret?: string;
  timestamp?: number;
  /** Replaces the computed signature header value. */
  header?: string | null;
}

function post(baseUrl: string, provider: string, body: string, headers: Record<string, string>): Promise<JsonResponse> {
  return request(baseUrl, `/api/billing/webhooks/${provider}`, {
    rawBody: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const headerOr = (name: string, computed: string, options: PostOptions): Record<string, string> =>
  options.header === null ? {} : { [name]: options.header ?? computed };

export function postProviderA(baseUrl: string, event: unknown, options: PostOptions = {}): Promise<JsonResponse> {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const signature = providerASignature(
    options.secret ?? PROVIDER_SECRETS.PROVIDER_A_WEBHOOK_SECRET,
    body,
    options.timestamp,
  );
  return post(baseUrl, 'provider_a', body, headerOr('provider_a-Signature', signature, options));
}

export function postProviderB(baseUrl: string, event: unknown, options: PostOptions = {}): Promise<JsonResponse> {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  return post(
    baseUrl,
    'provider_b',
    body,
    headerOr('x-callback-token', options.secret ?? PROVIDER_SECRETS.PROVIDER_B_CALLBACK_TOKEN, options),
  );
}

export function postProviderC(baseUrl: string, event: unknown, options: PostOptions = {}): Promise<JsonResponse> {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  return post(
    baseUrl,
    'provider_c',
    body,
    headerOr('X-Signature', hmacHex(options.secret ?? PROVIDER_SECRETS.PROVIDER_C_WEBHOOK_SECRET, body), options),
  );
}

let sequence = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(sequence++).toString(36)}`;

/** provider_a events in its envelope `{id, type, created, data: {object}}`. */
/**
 * A checkout session event: `completed` carries `payment_status` "paid" (a card), or "unpaid" when a delayed
 * method (a bank debit) was only started; `async_payment_succeeded` / `async_payment_failed` follow such a one.
 */
const checkoutSessionEvent = (
  type: string,
  invoiceId: string,
  amountMinor: number,
  currency: string,
  paymentIntent: string,
  paymentStatus: string,
  sessionId = nextId('cs'),
) => ({
  id: nextId('evt'),
  type,
  created: Math.floor(Date.now() / 1000),
  data: {
    object: {
      id: sessionId,
      object: 'checkout.session',
      payment_intent: paymentIntent,
      payment_status: paymentStatus,
      amount_total: amountMinor,
      currency: currency.toLowerCase(),
      metadata: { invoiceId },
    },
  },
});

export const providerAEvent = {
  checkoutCompleted: (
    invoiceId: string,
    amountMinor: number,
    currency: string,
    paymentIntent = nextId('pi'),
    paymentStatus = 'paid',
  ) =>
    checkoutSessionEvent('checkout.session.completed', invoiceId, amountMinor, currency, paymentIntent, paymentStatus),
  asyncPaymentSucceeded: (invoiceId: string, amountMinor: number, currency: string, paymentIntent: string) =>
    checkoutSessionEvent(
      'checkout.session.async_payment_succeeded',
      invoiceId,
      amountMinor,
      currency,
      paymentIntent,
      'paid',
    ),
  asyncPaymentFailed: (invoiceId: string, amountMinor: number, currency: string, paymentIntent: string) =>
    checkoutSessionEvent(
      'checkout.session.async_payment_failed',
      invoiceId,
      amountMinor,
      currency,
      paymentIntent,
      'unpaid',
    ),
  invoicePaid: (invoiceId: string, amountMinor: number, currency: string, paymentIntent = nextId('pi')) => ({
    id: nextId('evt'),
    type: 'invoice.paid',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: nextId('in'),
        object: 'invoice',
        amount_paid: amountMinor,
        payment_intent: paymentIntent,
        currency: currency.toLowerCase(),
        metadata: { invoiceId },
      },
    },
  }),
  paymentFailed: (invoiceId: string, subscriptionId?: string) => ({
    id: nextId('evt'),
    type: 'invoice.payment_failed',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: nextId('in'),
        object: 'invoice',
        last_payment_error: { code: 'card_declined', message: 'Your card was declined.' },
        metadata: { invoiceId, ...(subscriptionId ? { subscriptionId } : {}) },
      },
    },
  }),
  subscriptionUpdated: (subscriptionId: string, status: string, created = Math.floor(Date.now() / 1000)) => ({
    id: nextId('evt'),
    type: 'customer.subscription.updated',
    created,
    data: { object: { id: nextId('sub'), object: 'subscription', status, metadata: { subscriptionId } } },
  }),
};

/** provider_b's callback `{id, event, data: {id, external_id, amount, paid_amount, currency, status}}`. */
export const providerBPaid = (invoiceId: string, amount: string, currency: string, paymentId = nextId('pay_b')) => ({
  id: nextId('cb'),
  event: 'invoices.paid',
  data: { id: paymentId, external_id: invoiceId, amount, paid_amount: amount, currency, status: 'PAID' },
});

const PROVIDER_C_PAYMENTS = ['order_created', 'subscription_payment_success'];

/**
 * provider_c's `{meta: {event_name, custom_data}, data: {id, type, attributes}}` (amounts in cents). Its payment
 * events carry `status: "paid"` unless `attributes` says otherwise, as provider_c sends a paid order.
 */
export const providerCEvent = (
  eventName: string,
  custom: { invoice_id?: string; subscription_id?: string },
  attributes: Record<string, unknown>,
  id = nextId('ord'),
) => ({
  meta: { event_name: eventName, custom_data: custom },
  data: {
    id,
    type: eventName.startsWith('order') ? 'orders' : 'subscriptions',
    attributes: {
      updated_at: new Date().toISOString(),
      ...(PROVIDER_C_PAYMENTS.includes(eventName) ? { status: 'paid' } : {}),
      ...attributes,
    },
  },
});
