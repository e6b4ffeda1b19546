import test from 'ava';
import { startCheckout } from '../../src/checkout/service.ts';
import { AppError } from '../../src/errors.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeProviders, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request } from '../helpers/http.ts';
import {
  postProviderA,
  postProviderB,
  postProviderC,
  PROVIDER_SECRETS,
  providerAEvent,
  providerBPaid,
  providerCEvent,
} from '../helpers/provider-events.ts';
import { adminCtx, makeInvoice, readInvoice, type Ctx } from '../payments/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver, xSignatureValid } from '../webhooks/receiver.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let app: TestApp;
let fake: FakeProviderA;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let endpointSecret: string;
let c: Ctx;
test.before(async () => {
  fake = await startFakeProviders();
  app = await startTestApp({
    ...PROVIDER_SECRETS,
    PROVIDER_A_API_URL: fake.url,
    PROVIDER_A_SECRET_KEY: fake.secretKey,
    PROVIDER_B_API_URL: fake.url,
    PROVIDER_B_SECRET_KEY: fake.providerBKey,
  });
  c = await adminCtx(app);
  receiver = await startReceiver();
  const endpoint = await request(app.baseUrl, '/api/billing/webhooks/endpoints', {
    cookie: c.cookie,
    body: { url: receiver.url('/billing'), events: ['invoice.paid'] },
  });
  if (endpoint.status !== 201) throw new Error(endpoint.text);
  endpointSecret = endpoint.body.secret;
  await registerWorkers(app.boss, app.deps, ['provider_events', 'webhooks'], jobHandlers);
});
test.after.always(async () => {
  await receiver?.close();
  await app?.close();
  await fake?.close();
});

const checkout = (provider: string, body: Record<string, unknown>) =>
  request(app.baseUrl, `/api/billing/checkout/${provider}`, { cookie: c.cookie, body });
const urls = { successUrl: 'https://shop.example/thanks', cancelUrl: 'https://shop.example/cart' };

/** The invoice.paid webhook the registered endpoint received for `invoiceId`, verified by its signature. */
const invoicePaidDelivered = (invoiceId: string) =>
  waitFor(
    () =>
      receiver
        .at('/billing')
        .filter((r) => xSignatureValid(endpointSecret, r) && JSON.parse(r.body).data?.invoiceId === invoiceId),
    (found) => found.length > 0,
  );

test(
  'provider_a end to end: checkout session for the amount due, then the signed event pays the invoice once and ' +
    'invoice.paid is delivered',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '49.99' });
    const res = await checkout('provider_a', { invoiceId: invoice.id, ...urls });
    t.is(res.status, 201, res.text);
    t.like(res.body, { provider: 'provider_a', invoiceId: invoice.id });
    t.regex(res.body.id, /^cs_/);
    t.regex(res.body.url, /^https:\/\//);
    const sent = await fake.received(invoice.id);
    t.is(sent.path, '/v1/checkout/sessions');
    t.like(sent.form, {
      mode: 'payment',
      'line_items[0][price_data][unit_amount]': '4999',
      'line_items[0][price_data][currency]': 'usd',
      success_url: urls.successUrl,
      cancel_url: urls.cancelUrl,
      'metadata[invoiceId]': invoice.id,
    });
    t.truthy(sent.headers['idempotency-key']);

    const event = providerAEvent.checkoutCompleted(invoice.id, 4999, 'USD');
    t.is((await postProviderA(app.baseUrl, event)).status, 200);
    const delivered = await invoicePaidDelivered(invoice.id);
    t.is(delivered.length, 1);
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
    t.is((await app.db('payments').where({ invoice_id: invoice.id })).length, 1);
    t.is((await app.db('checkout_sessions').where({ invoice_id: invoice.id })).length, 1);
  },
);

test(
  'provider_b end to end: provider invoice (JSON, decimal amount, external_id), then invoices.paid pays it and ' +
    'invoice.paid is delivered',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '120.50' });
    const res = await checkout('provider_b', { invoiceId: invoice.id, successUrl: urls.successUrl });
    t.is(res.status, 201, res.text);
    t.like(res.body, { provider: 'provider_b', invoiceId: invoice.id });
    const sent = await fake.received(invoice.id);
    t.is(sent.path, '/v2/invoices');
    t.like(sent.form, {
      external_id: invoice.id,
      amount: '120.50',
      currency: 'USD',
      success_redirect_url: urls.successUrl,
    });
    t.is((await postProviderB(app.baseUrl, providerBPaid(invoice.id, '120.50', 'USD', res.body.id))).status, 200);
    t.is((await invoicePaidDelivered(invoice.id)).length, 1);
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
  },
);

test('provider_c end to end: an order_created event pays the invoice and invoice.paid is delivered', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '9.00' });
  t.is(
    (
      await postProviderC(
        app.baseUrl,
        providerCEvent('order_created', { invoice_id: invoice.id }, { total: 900, currency: 'USD' }),
      )
    ).status,
    200,
  );
  t.is((await invoicePaidDelivered(invoice.id)).length, 1);
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
});

test('an invoice that is not payable is 409 invoice_not_payable and the provider is not called', async (t) => {
  const draft = await makeInvoice(c, { unitPrice: '5.00', status: 'draft' });
  const paid = await makeInvoice(c, { unitPrice: '5.00' });
  await request(app.baseUrl, '/api/billing/payments', {
    cookie: c.cookie,
    body: { invoiceId: paid.id, amount: '5.00', paymentMethod: 'manual' },
  });
  for (const invoice of [draft, paid]) {
    const res = await checkout('provider_a', { invoiceId: invoice.id, ...urls });
    t.is(res.status, 409, res.text);
    t.is(res.body.error.code, 'invoice_not_payable');
  }
  // Other tests share the fake concurrently: count only requests about these invoices.
  t.is(fake.requests.filter((r) => [draft.id, paid.id].includes(r.form['metadata[invoiceId]'])).length, 0);
});

test('bad input: unknown invoice, bad URLs, missing fields', async (t) => {
  const unknown = await checkout('provider_a', { invoiceId: '00000000-0000-4000-8000-000000000001', ...urls });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'invoice_not_found');
  const invoice = await makeInvoice(c, { unitPrice: '5.00' });
  for (const body of [
    { invoiceId: invoice.id, successUrl: 'javascript:alert(1)', cancelUrl: urls.cancelUrl },
    { invoiceId: invoice.id, successUrl: urls.successUrl },
    { invoiceId: 'nope', ...urls },
  ]) {
    const res = await checkout('provider_a', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'invalid_request');
  }
  t.is((await app.db('checkout_sessions').where({ invoice_id: invoice.id })).length, 0);
});

test(
  'a provider 500 or refusal is 502 provider_error with its message and nothing recorded; a timeout is ' +
    'provider_error too',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '5.00' });
    fake.behave(invoice.id, { status: 500, body: { error: { type: 'api_error', message: 'Something went wrong' } } });
    const res = await checkout('provider_a', { invoiceId: invoice.id, ...urls });
    t.is(res.status, 502);
    t.is(res.body.error.code, 'provider_error');
    t.regex(res.body.error.message, /Something went wrong/);
    fake.behave(invoice.id, {
      status: 400,
      body: { error_code: 'API_VALIDATION_ERROR', message: 'currency not supported' },
    });
    const b = await checkout('provider_b', { invoiceId: invoice.id, successUrl: urls.successUrl });
    t.is(b.status, 502);
    t.regex(b.body.error.message, /currency not supported/);
    fake.behave(invoice.id, { delayMs: 1000 });
    const error = await t.throwsAsync(
      startCheckout(app.db, app.deps.config, 'provider_a', { invoiceId: invoice.id, ...urls }, SYSTEM_ACTOR, {
        timeoutMs: 100,
      }),
    );
    t.true(error instanceof AppError && error.code === 'provider_error');
    t.regex(error!.message, /did not answer/);
    t.is((await app.db('checkout_sessions').where({ invoice_id: invoice.id })).length, 0);
  },
);

test('a connection reset by either provider is 502 provider_error and nothing is recorded', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '7.00' });
  fake.behave(invoice.id, { reset: true });
  const a = await checkout('provider_a', { invoiceId: invoice.id, ...urls });
  t.is(a.status, 502, a.text);
  t.is(a.body.error.code, 'provider_error');
  t.regex(a.body.error.message, /provider_a could not be reached/);
  const b = await checkout('provider_b', { invoiceId: invoice.id, successUrl: urls.successUrl });
  t.is(b.status, 502, b.text);
  t.regex(b.body.error.message, /provider_b could not be reached/);
  t.is((await app.db('checkout_sessions').where({ invoice_id: invoice.id })).length, 0);
  t.is((await readInvoice(c, invoice.id)).status, 'issued');
});
