/**
 * A draft is "not yet sent" (interface.md): the customer's API key neither lists it nor reads it or its PDF;
 * it answers as an unknown id does. Once issued, the same invoice is the customer's to see.
 */
import test from 'ava';
import { renderInvoicePdfJob } from '../../src/invoices/pdf/render-pdf.job.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createApiKey, createCustomer, createInvoice, getBinary } from '../invoices-pdf/helpers.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const renderJobCount = async () =>
  Number(
    (await app.db.raw('select count(*)::int as n from pgboss.job where name = ?', [renderInvoicePdfJob.name])).rows[0]
      .n,
  );
const line = (description: string) => [{ description, quantity: 1, unitPrice: '25.00' }];

async function customerWithKey() {
  const customer = await createCustomer(app.baseUrl, cookie);
  return { id: customer.id, key: await createApiKey(app.baseUrl, cookie, customer.id) };
}

test('GET /api/v1/invoices lists the invoices sent (issued, paid, void), never a draft', async (t) => {
  const customer = await customerWithKey();
  const draft = await createInvoice(app.baseUrl, cookie, {
    customerId: customer.id,
    lineItems: line('Draft'),
    status: 'draft',
  });
  const issued = await createInvoice(app.baseUrl, cookie, {
    customerId: customer.id,
    lineItems: line('Issued'),
    status: 'issued',
  });
  const voided = await createInvoice(app.baseUrl, cookie, {
    customerId: customer.id,
    lineItems: line('Voided'),
    status: 'issued',
  });
  t.is(
    (
      await request(app.baseUrl, `/api/billing/invoices/${voided.id}`, {
        method: 'PUT',
        cookie,
        body: { status: 'void' },
      })
    ).status,
    200,
  );
  t.is(draft.status, 'draft');

  const list = await request(app.baseUrl, '/api/v1/invoices', { bearer: customer.key });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.map((i: { id: string }) => i.id),
    [issued.id, voided.id],
  );
  // Paging counts only what is listed: the draft is not a hidden row in a page.
  const firstPage = await request(app.baseUrl, '/api/v1/invoices?limit=1', { bearer: customer.key });
  t.deepEqual(
    firstPage.body.map((i: { id: string }) => i.id),
    [issued.id],
  );
  t.deepEqual(
    (await request(app.baseUrl, '/api/v1/invoices?status=void', { bearer: customer.key })).body.map(
      (i: { id: string }) => i.id,
    ),
    [voided.id],
  );
  // There is no draft status to ask for through the customer's key.
  const asked = await request(app.baseUrl, '/api/v1/invoices?status=draft', { bearer: customer.key });
  t.is(asked.status, 400);
  t.is(asked.body.error.code, 'invalid_request');
});

test(
  'GET /api/v1/invoices/:id and its PDF answer 404 for a draft, ' + 'exactly as for an unknown id, and queue no render',
  async (t) => {
    const customer = await customerWithKey();
    const draft = await createInvoice(app.baseUrl, cookie, {
      customerId: customer.id,
      lineItems: line('Not sent yet'),
    });
    t.is(draft.status, 'draft');
    const unknown = '00000000-0000-4000-8000-000000000000';

    const read = await request(app.baseUrl, `/api/v1/invoices/${draft.id}`, { bearer: customer.key });
    t.is(read.status, 404);
    t.deepEqual(read.body, (await request(app.baseUrl, `/api/v1/invoices/${unknown}`, { bearer: customer.key })).body);

    const before = await renderJobCount();
    const pdf = await getBinary(app.baseUrl, `/api/v1/invoices/${draft.id}/pdf`, { bearer: customer.key });
    t.is(pdf.status, 404);
    t.deepEqual(
      pdf.json,
      (await getBinary(app.baseUrl, `/api/v1/invoices/${unknown}/pdf`, { bearer: customer.key })).json,
    );
    t.is(await renderJobCount(), before);

    // The admin still sees the draft.
    t.is((await request(app.baseUrl, `/api/billing/invoices/${draft.id}`, { cookie })).status, 200);
  },
);

test('once issued, the former draft is listed and readable through the customer key', async (t) => {
  const customer = await customerWithKey();
  const invoice = await createInvoice(app.baseUrl, cookie, { customerId: customer.id, lineItems: line('Sent later') });
  t.deepEqual((await request(app.baseUrl, '/api/v1/invoices', { bearer: customer.key })).body, []);
  t.is(
    (
      await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
        method: 'PUT',
        cookie,
        body: { status: 'issued' },
      })
    ).status,
    200,
  );

  const list = await request(app.baseUrl, '/api/v1/invoices', { bearer: customer.key });
  t.deepEqual(
    list.body.map((i: { id: string }) => i.id),
    [invoice.id],
  );
  const read = await request(app.baseUrl, `/api/v1/invoices/${invoice.id}`, { bearer: customer.key });
  t.is(read.status, 200);
  t.like(read.body, { id: invoice.id, status: 'issued', pdfUrl: `/api/v1/invoices/${invoice.id}/pdf` });
});
