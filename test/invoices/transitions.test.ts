import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { postInvoice } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const STATUSES = ['draft', 'issued', 'paid', 'overdue', 'void'] as const;
const SETTABLE = ['draft', 'issued', 'paid', 'void'] as const;
const ALLOWED = new Set(['draft>issued', 'draft>void', 'issued>paid', 'issued>void', 'overdue>paid', 'overdue>void']);

/** An invoice in `status`: built through the API, overdue set as the lifecycle sweep would. */
async function invoiceIn(status: (typeof STATUSES)[number]): Promise<string> {
  const created = await postInvoice(app.baseUrl, cookie, app.db, { status: status === 'draft' ? 'draft' : 'issued' });
  const id = created.body.id as string;
  if (status === 'paid' || status === 'void')
    await request(app.baseUrl, `/api/billing/invoices/${id}`, { method: 'PUT', cookie, body: { status } });
  if (status === 'overdue') await app.db('invoices').where({ id }).update({ status: 'overdue' });
  const read = await request(app.baseUrl, `/api/billing/invoices/${id}`, { cookie });
  if (read.body.status !== status) throw new Error(`setup: wanted ${status}, got ${read.body.status}`);
  return id;
}

for (const from of STATUSES) {
  for (const to of SETTABLE) {
    const allowed = ALLOWED.has(`${from}>${to}`);
    test(`${from} -> ${to} is ${allowed ? 'allowed' : 'refused with 409'}`, async (t) => {
      const id = await invoiceIn(from);
      const before = await app.db('invoices').where({ id }).first();
      const res = await request(app.baseUrl, `/api/billing/invoices/${id}`, {
        method: 'PUT',
        cookie,
        body: { status: to },
      });
      if (allowed) {
        t.is(res.status, 200, res.text);
        t.is(res.body.status, to);
        t.is((await app.db('invoices').where({ id }).first()).content_version, before.content_version + 1);
      } else {
        t.is(res.status, 409);
        t.is(res.body.error.code, 'invalid_status_transition');
        t.deepEqual(await app.db('invoices').where({ id }).first(), before);
      }
    });
  }
}

test('PUT overdue is not a settable status', async (t) => {
  const id = await invoiceIn('issued');
  const res = await request(app.baseUrl, `/api/billing/invoices/${id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'overdue' },
  });
  t.is(res.status, 400);
  t.is(res.body.error.details[0].path, 'status');
});

test('issuing stamps the issue date and a due date of issue + payment terms; marking paid stamps paidAt', async (t) => {
  const id = await invoiceIn('draft');
  const issued = await request(app.baseUrl, `/api/billing/invoices/${id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'issued' },
  });
  const issuedAt = Date.parse(issued.body.issuedAt);
  t.true(Math.abs(issuedAt - Date.now()) < 60_000);
  t.is(Date.parse(issued.body.dueDate) - issuedAt, 14 * 86_400_000);
  t.is(issued.body.paidAt, null);
  const paid = await request(app.baseUrl, `/api/billing/invoices/${id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'paid' },
  });
  t.truthy(paid.body.paidAt);
  t.is(paid.body.amountDue, '0.00');
});

test('an explicit due date is kept at issue', async (t) => {
  const res = await postInvoice(app.baseUrl, cookie, app.db, { status: 'issued', dueDate: '2030-01-15' });
  t.is(res.body.dueDate, '2030-01-15T00:00:00.000Z');
});

test('unknown and malformed invoice ids are 404', async (t) => {
  t.is(
    (
      await request(app.baseUrl, '/api/billing/invoices/00000000-0000-4000-8000-000000000000', {
        method: 'PUT',
        cookie,
        body: { status: 'void' },
      })
    ).status,
    404,
  );
  t.is((await request(app.baseUrl, '/api/billing/invoices/nope', { cookie })).status, 404);
});

test('an invoice with payments is not voided (409 invoice_has_payments) and stays as it was', async (t) => {
  const id = await invoiceIn('issued');
  const paid = await request(app.baseUrl, '/api/billing/payments', {
    cookie,
    body: { invoiceId: id, amount: '4.00', paymentMethod: 'manual' },
  });
  t.is(paid.status, 201, paid.text);
  const before = await app.db('invoices').where({ id }).first();
  const res = await request(app.baseUrl, `/api/billing/invoices/${id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'void' },
  });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'invoice_has_payments');
  t.deepEqual(await app.db('invoices').where({ id }).first(), before);
});
