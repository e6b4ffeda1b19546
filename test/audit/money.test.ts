/**
 * C-11 audit log on the money domains: each admin write of the API and each console action leaves exactly one
 * row with its before/after, a refusal leaves none, and no secret (API key, webhook secret, password, payment
 * method token, checkout URL) ever reaches the table.
 */
import test from 'ava';
import { actorName } from '../../src/actor.ts';
import { recordAudits } from '../../src/audit/service.ts';
import { actorOf } from '../../src/http/principal.ts';
import { allRoutes } from '../../src/web/routes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { consoleCsrf, loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { startFakeProviders, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request } from '../helpers/http.ts';
import { line } from '../invoices/fixtures.ts';
import { auditMark, auditTableText, expectNoAudit, expectOneAudit } from './fixtures.ts';

let app: TestApp;
let fake: FakeProviderA;
let cookie: string;
let adminEmail: string;
let adminPassword: string;
test.before(async () => {
  fake = await startFakeProviders();
  app = await startTestApp({ PROVIDER_A_API_URL: fake.url, PROVIDER_A_SECRET_KEY: fake.secretKey });
  ({ cookie, email: adminEmail, password: adminPassword } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => {
  await app?.close();
  await fake?.close();
});

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

/** A console form post as the browser makes it; the answer after following the 303 (or the refusal's page). */
const consolePost = async (path: string, fields: Record<string, string>) =>
  request(app.baseUrl, path, {
    cookie,
    rawBody: new URLSearchParams({ _csrf: await consoleCsrf(app.baseUrl, cookie), ...fields }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

async function invoice(
  body: Record<string, unknown> = {},
): Promise<{ id: string; customerId: string; invoiceNumber: string }> {
  const customerId = (body.customerId as string | undefined) ?? (await insertCustomer(app.db)).id;
  const res = await api('/api/billing/invoices', {
    body: { customerId, lineItems: [line('100.00')], status: 'issued', ...body },
  });
  if (res.status !== 201) throw new Error(`setup invoice: ${res.status} ${res.text}`);
  return res.body;
}

const pay = (invoiceId: string, amount: string) =>
  api('/api/billing/payments', {
    body: { invoiceId, amount, paymentMethod: 'bank_transfer', providerReference: `wire-${invoiceId}-${amount}` },
  });

test.serial(
  'POST /api/billing/invoices: one invoice.create row with the invoice as created, the admin, the request id and ' +
    'the IP',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const mark = await auditMark(app.db);
    const res = await api('/api/billing/invoices', {
      body: { customerId: customer.id, lineItems: [line('100.00'), line('5.00')], taxRate: '10' },
      headers: { 'x-request-id': 'req-inv-1' },
    });
    t.is(res.status, 201);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'invoice.create',
      target_type: 'invoice',
      target_id: res.body.id,
      actor_email: adminEmail,
      request_id: 'req-inv-1',
      before: null,
    });
    t.like(row.after, {
      invoiceNumber: res.body.invoiceNumber,
      status: 'draft',
      customerId: customer.id,
      currency: 'USD',
      total: '115.50',
      lineCount: 2,
    });
    t.regex(row.ip ?? '', /127\.0\.0\.1/);
  },
);

test.serial(
  'PUT /api/billing/invoices/:id: issue, mark paid and void each leave one row with the status before and after',
  async (t) => {
    const draft = await invoice({ status: 'draft' });
    let mark = await auditMark(app.db);
    t.is((await api(`/api/billing/invoices/${draft.id}`, { method: 'PUT', body: { status: 'issued' } })).status, 200);
    const issued = await expectOneAudit(t, app.db, mark, {
      action: 'invoice.issue',
      target_type: 'invoice',
      target_id: draft.id,
    });
    t.like(issued.before, { status: 'draft', issuedAt: null });
    t.like(issued.after, { status: 'issued' });
    t.truthy(issued.after!.issuedAt);

    mark = await auditMark(app.db);
    t.is((await api(`/api/billing/invoices/${draft.id}`, { method: 'PUT', body: { status: 'paid' } })).status, 200);
    const paid = await expectOneAudit(t, app.db, mark, { action: 'invoice.mark_paid', target_id: draft.id });
    t.like(paid.before, { status: 'issued', paidAt: null });
    t.like(paid.after, { status: 'paid' });

    const other = await invoice();
    mark = await auditMark(app.db);
    t.is((await api(`/api/billing/invoices/${other.id}`, { method: 'PUT', body: { status: 'void' } })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'invoice.void',
      target_id: other.id,
      before: { status: 'issued', voidedAt: null },
    });
  },
);

test.serial(
  'refused invoice and payment writes leave no row: void of a paid or part-paid invoice, payment above the amount ' +
    'due, unknown customer',
  async (t) => {
    const paid = await invoice();
    t.is((await pay(paid.id, '100.00')).status, 201);
    const partly = await invoice();
    t.is((await pay(partly.id, '10.00')).status, 201);
    const mark = await auditMark(app.db);
    t.is((await api(`/api/billing/invoices/${paid.id}`, { method: 'PUT', body: { status: 'void' } })).status, 409);
    t.is((await api(`/api/billing/invoices/${partly.id}`, { method: 'PUT', body: { status: 'void' } })).status, 409);
    t.is((await pay(partly.id, '90.01')).status, 400);
    t.is((await pay(paid.id, '1.00')).status, 400);
    t.is(
      (
        await api('/api/billing/invoices', {
          body: { customerId: '00000000-0000-4000-8000-000000000000', lineItems: [line('1.00')] },
        })
      ).status,
      400,
    );
    t.is(
      (
        await api('/api/billing/credits', {
          body: { customerId: '00000000-0000-4000-8000-000000000000', amount: '5.00' },
        })
      ).status,
      400,
    );
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  'POST /api/billing/payments: one payment.record row on the invoice, naming the payment, its amount and method',
  async (t) => {
    const inv = await invoice();
    const mark = await auditMark(app.db);
    const res = await pay(inv.id, '100.00');
    t.is(res.status, 201);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'payment.record',
      target_type: 'invoice',
      target_id: inv.id,
      actor_email: adminEmail,
    });
    t.like(row.before, { status: 'issued', amountPaid: '0.00', paidAt: null });
    t.like(row.after, {
      status: 'paid',
      amountPaid: '100.00',
      paymentId: res.body.id,
      amount: '100.00',
      method: 'bank_transfer',
    });
  },
);

test.serial(
  "POST /api/billing/refunds: one refund.create row on the payment's invoice, with the payment and what is refunded",
  async (t) => {
    const inv = await invoice();
    const payment = (await pay(inv.id, '100.00')).body;
    let mark = await auditMark(app.db);
    const res = await api('/api/billing/refunds', {
      body: { paymentId: payment.id, amount: '30.00', reason: 'goodwill' },
    });
    t.is(res.status, 201);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'refund.create',
      target_type: 'invoice',
      target_id: inv.id,
    });
    t.deepEqual(row.before, { refundedAmount: '0.00', paymentStatus: 'succeeded' });
    t.like(row.after, {
      refundId: res.body.id,
      paymentId: payment.id,
      amount: '30.00',
      reason: 'goodwill',
      refundedAmount: '30.00',
      paymentStatus: 'partially_refunded',
    });

    mark = await auditMark(app.db);
    t.is((await api('/api/billing/refunds', { body: { paymentId: payment.id, amount: '70.01' } })).status, 400);
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  'POST /api/billing/credits: one credit.grant row on the customer, naming the invoices it paid',
  async (t) => {
    const inv = await invoice();
    const mark = await auditMark(app.db);
    const res = await api('/api/billing/credits', {
      body: { customerId: inv.customerId, amount: '150.00', description: 'Apology' },
    });
    t.is(res.status, 201);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'credit.grant',
      target_type: 'customer',
      target_id: inv.customerId,
      before: null,
    });
    t.like(row.after, { amount: '150.00', currency: 'USD', description: 'Apology', balanceAfter: '50.00' });
    t.deepEqual(row.after!.appliedTo, [{ invoiceId: inv.id, invoiceNumber: inv.invoiceNumber, amount: '100.00' }]);
  },
);

test.serial(
  'POST /api/billing/credit-notes: one credit_note.create row on the invoice; a note above the total leaves none',
  async (t) => {
    const inv = await invoice();
    let mark = await auditMark(app.db);
    const res = await api('/api/billing/credit-notes', {
      body: { invoiceId: inv.id, amount: '40.00', reason: 'late delivery' },
    });
    t.is(res.status, 201);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'credit_note.create',
      target_type: 'invoice',
      target_id: inv.id,
    });
    t.like(row.before, { creditedAmount: '0.00' });
    t.like(row.after, {
      creditedAmount: '40.00',
      creditNoteId: res.body.id,
      creditNoteNumber: res.body.number,
      amount: '40.00',
      reason: 'late delivery',
      toStoreCredit: '0.00',
    });

    mark = await auditMark(app.db);
    t.is((await api('/api/billing/credit-notes', { body: { invoiceId: inv.id, amount: '60.01' } })).status, 400);
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  "payment methods: store and remove each leave one row on the customer, never the provider's method id",
  async (t) => {
    const customer = await insertCustomer(app.db);
    const token = 'pm_audit_secret_token_4242';
    let mark = await auditMark(app.db);
    const created = await api('/api/billing/payment-methods', {
      body: { customerId: customer.id, type: 'provider_a', providerMethodId: token, isDefault: true },
    });
    t.is(created.status, 201);
    await expectOneAudit(t, app.db, mark, {
      action: 'payment_method.create',
      target_type: 'customer',
      target_id: customer.id,
      before: null,
      after: { paymentMethodId: created.body.id, type: 'provider_a', isDefault: true },
    });

    mark = await auditMark(app.db);
    t.is(
      (
        await api('/api/billing/payment-methods', {
          body: { customerId: customer.id, type: 'provider_a', providerMethodId: token, isDefault: false },
        })
      ).status,
      409,
    );
    t.is(
      (await api('/api/billing/payment-methods/00000000-0000-4000-8000-000000000000', { method: 'DELETE' })).status,
      404,
    );
    await expectNoAudit(t, app.db, mark);

    t.is((await api(`/api/billing/payment-methods/${created.body.id}`, { method: 'DELETE' })).status, 204);
    await expectOneAudit(t, app.db, mark, {
      action: 'payment_method.delete',
      target_type: 'customer',
      target_id: customer.id,
      after: null,
      before: { paymentMethodId: created.body.id, type: 'provider_a', isDefault: true },
    });
    t.false((await auditTableText(app.db)).includes(token));
  },
);

test.serial(
  'checkout: one checkout.create row on the invoice without the page URL; a provider failure leaves none',
  async (t) => {
    const inv = await invoice();
    const urls = { successUrl: 'https://shop.example/thanks', cancelUrl: 'https://shop.example/cart' };
    let mark = await auditMark(app.db);
    const res = await api('/api/billing/checkout/provider_a', { body: { invoiceId: inv.id, ...urls } });
    t.is(res.status, 201);
    await expectOneAudit(t, app.db, mark, {
      action: 'checkout.create',
      target_type: 'invoice',
      target_id: inv.id,
      after: { provider: 'provider_a', sessionId: res.body.id, amount: '100.00', currency: 'USD' },
    });
    t.false((await auditTableText(app.db)).includes(res.body.url));

    const failing = await invoice();
    fake.behave(failing.id, { status: 500, body: { error: { type: 'api_error', message: 'down' } } });
    mark = await auditMark(app.db);
    t.is((await api('/api/billing/checkout/provider_a', { body: { invoiceId: failing.id, ...urls } })).status, 502);
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  'console actions of issue 17 each leave one row by the signed-in admin; a refused one leaves none',
  async (t) => {
    const customer = await insertCustomer(app.db);
    let mark = await auditMark(app.db);
    const created = await consolePost('/admin/invoices', {
      customerId: customer.id,
      currency: 'USD',
      status: 'draft',
      'lineItems[0][description]': 'Setup',
      'lineItems[0][quantity]': '1',
      'lineItems[0][unitPrice]': '200.00',
    });
    t.is(created.status, 200);
    const create = await expectOneAudit(t, app.db, mark, {
      action: 'invoice.create',
      target_type: 'invoice',
      actor_email: adminEmail,
      before: null,
    });
    t.like(create.after, { status: 'draft', total: '200.00', customerId: customer.id });
    const id = create.target_id;

    const steps: [string, Record<string, string>, string, Record<string, unknown>][] = [
      [`/admin/invoices/${id}/status`, { status: 'issued' }, 'invoice.issue', { status: 'issued' }],
      [
        `/admin/invoices/${id}/payments`,
        { amount: '50.00', paymentMethod: 'manual', providerReference: '' },
        'payment.record',
        { amountPaid: '50.00', amount: '50.00', method: 'manual' },
      ],
      [
        `/admin/invoices/${id}/credit-notes`,
        { amount: '20.00', reason: 'discount' },
        'credit_note.create',
        { creditedAmount: '20.00', amount: '20.00' },
      ],
    ];
    for (const [path, fields, action, after] of steps) {
      mark = await auditMark(app.db);
      t.is((await consolePost(path, fields)).status, 200, path);
      const row = await expectOneAudit(t, app.db, mark, {
        action,
        target_type: 'invoice',
        target_id: id,
        actor_email: adminEmail,
      });
      t.like(row.after, after);
    }

    const paymentId = (await app.db('payments').where({ invoice_id: id }).first()).id as string;
    mark = await auditMark(app.db);
    t.is(
      (
        await consolePost(`/admin/payments/${paymentId}/refunds`, {
          amount: '10.00',
          reason: 'partial',
          confirm: 'yes',
        })
      ).status,
      200,
    );
    await expectOneAudit(t, app.db, mark, {
      action: 'refund.create',
      target_type: 'invoice',
      target_id: id,
      actor_email: adminEmail,
    });

    mark = await auditMark(app.db);
    t.is(
      (
        await consolePost(`/admin/customers/${customer.id}/credits`, {
          amount: '500.00',
          currency: 'USD',
          description: 'Goodwill',
        })
      ).status,
      200,
    );
    const grant = await expectOneAudit(t, app.db, mark, {
      action: 'credit.grant',
      target_type: 'customer',
      target_id: customer.id,
      actor_email: adminEmail,
    });
    t.like(grant.after, { amount: '500.00', balanceAfter: '370.00' });

    // Refused: the invoice is paid now (credit settled it), so a payment and a void are refused.
    mark = await auditMark(app.db);
    t.is(
      (await consolePost(`/admin/invoices/${id}/payments`, { amount: '1.00', paymentMethod: 'manual' })).status,
      400,
    );
    t.is((await consolePost(`/admin/invoices/${id}/status`, { status: 'void' })).status, 409);
    t.is((await consolePost(`/admin/customers/${customer.id}/credits`, { amount: '-5' })).status, 400);
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  'v1: the API-key API writes only where listed; its actor is recorded as api_key:<id>, and its reads leave no row',
  async (t) => {
    // A v1 write records its change with the key as actor; any new one must come with its audit test. Usage events
    // (issue 35) change no object: the events are data, kept with when they were received, and leave no audit row
    // (docs/decisions.md, usage-based pricing). A portal session (issue 37) leaves one, the key as its actor.
    t.deepEqual(
      allRoutes.filter((r) => r.auth === 'apiKey' && r.method !== 'get').map((r) => `${r.method} ${r.path}`),
      ['post /api/v1/usage/events', 'post /api/v1/portal-sessions'],
    );

    const customer = await insertCustomer(app.db);
    const key = await api('/api/api-keys', { body: { name: 'v1 audit', customerId: customer.id } });
    t.is(key.status, 201);
    let mark = await auditMark(app.db);
    t.is((await request(app.baseUrl, '/api/v1/customer', { bearer: key.body.key })).status, 200);
    t.is((await request(app.baseUrl, '/api/v1/invoices', { bearer: key.body.key })).status, 200);
    const usage = await request(app.baseUrl, '/api/v1/usage/events', {
      bearer: key.body.key,
      body: { events: [{ transactionId: 'audit-1', metric: 'no_such_metric' }] },
    });
    t.is(usage.status, 200);
    await expectNoAudit(t, app.db, mark);
    mark = await auditMark(app.db);
    const portal = await request(app.baseUrl, '/api/v1/portal-sessions', { bearer: key.body.key, body: {} });
    t.is(portal.status, 201);
    await expectOneAudit(t, app.db, mark, { actor: `api_key:${key.body.id}`, actor_email: null });

    // The actor a v1 route's handler is given, as the router builds it for an API key.
    const actor = actorOf({ kind: 'apiKey', apiKeyId: key.body.id, customerId: customer.id }, 'req-v1', '127.0.0.1');
    t.is(actorName(actor), `api_key:${key.body.id}`);
    mark = await auditMark(app.db);
    await recordAudits(app.db, actor, [
      {
        action: 'customer.update',
        targetType: 'customer',
        targetId: customer.id,
        before: { name: 'a' },
        after: { name: 'b' },
      },
    ]);
    await expectOneAudit(t, app.db, mark, { actor: `api_key:${key.body.id}`, actor_email: null, request_id: 'req-v1' });
    const listed = await api(`/api/audit-log?actor=api_key:${key.body.id}`);
    t.deepEqual(
      listed.body.map((e: { actor: string }) => e.actor),
      [`api_key:${key.body.id}`, `api_key:${key.body.id}`],
    );
  },
);

test.serial(
  'secrets never reach the table: an API key, a webhook secret, a password, after writes that carry them',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const key = await api('/api/api-keys', { body: { name: 'secret check', customerId: customer.id } });
    t.is(key.status, 201);
    const secret = 'whsec_audit_plaintext_secret_0123456789';
    const endpoint = await api('/api/billing/webhooks/endpoints', {
      body: { url: 'https://hooks.example/audit', events: ['invoice.paid'], secret },
    });
    t.is(endpoint.status, 201);
    t.is(
      (await request(app.baseUrl, '/api/auth/login', { body: { email: adminEmail, password: adminPassword } })).status,
      200,
    );
    const inv = await invoice({ customerId: customer.id });
    t.is((await pay(inv.id, '100.00')).status, 201);

    const table = await auditTableText(app.db);
    t.true(table.length > 0);
    t.false(table.includes(key.body.key), 'the plaintext API key');
    t.false(table.includes(secret), 'the webhook secret');
    t.false(table.includes(endpoint.body.secret), 'the webhook secret as answered');
    t.false(table.includes(adminPassword), 'the password');
  },
);
