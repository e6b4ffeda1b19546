/**
 * D-53 end to end: the real pdf worker process (workers/pdf.ts) with real Chromium renders what
 * GET /api/billing/invoices/:id/pdf asks for. Serial: the first test needs the worker not yet running.
 */
import test from 'ava';
import { renderInvoicePdfJob } from '../../src/invoices/pdf/render-pdf.job.ts';
import { displayAmount } from '../../src/invoices/pdf/template.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  createApiKey,
  createCustomer,
  createInvoice,
  getBinary,
  pdfText,
  spawnPdfWorker,
  type BinaryResponse,
  type WorkerProcess,
} from './helpers.ts';

let app: TestApp;
let cookie: string;
let worker: WorkerProcess | undefined;
let customer: { id: string; name: string };
let invoice: Awaited<ReturnType<typeof createInvoice>>;

test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie,
    body: {
      'company.name': 'Northwind Billing GmbH',
      'company.address': 'Hauptstraße 1\n10115 Berlin',
      'company.email': 'invoices@northwind.test',
      'company.tax_id': 'DE123456789',
    },
  });
  customer = await createCustomer(app.baseUrl, cookie, {
    name: 'Zoë Łukasiewicz',
    company: 'Quantum Widgets Ltd',
    billingAddress: '5 Harbour Road\nDublin',
    taxId: 'IE9876543W',
  });
  invoice = await createInvoice(app.baseUrl, cookie, {
    customerId: customer.id,
    taxRate: '10',
    lineItems: [
      { description: 'Annual support plan', quantity: 1, unitPrice: '1200.00' },
      { description: 'Extra seats', quantity: 3, unitPrice: '49.99' },
    ],
  });
});

test.after.always(async () => {
  const code = await worker?.stop();
  if (worker && (code !== 0 || process.env.PDF_TEST_DEBUG)) console.error(worker.output());
  await app?.close();
});

const renderJobs = async (invoiceId: string) =>
  (
    await app.db.raw(`select state, singleton_key from pgboss.job where name = ? and data->>'invoiceId' = ?`, [
      renderInvoicePdfJob.name,
      invoiceId,
    ])
  ).rows as Array<{ state: string; singleton_key: string }>;

/** GETs until a 200 (each GET itself waits up to 10 s for the worker). */
async function getPdfEventually(path: string, auth: { cookie?: string; bearer?: string }): Promise<BinaryResponse> {
  return waitFor(
    () => getBinary(app.baseUrl, path, auth),
    (r) => r.status !== 202,
    90_000,
  );
}

test.serial(
  'with no worker running the endpoint answers 202 with Retry-After after about 10 s; concurrent requests join ' +
    'one render',
  async (t) => {
    const started = Date.now();
    const [first, second] = await Promise.all([
      getBinary(app.baseUrl, invoice.pdfUrl, { cookie }),
      getBinary(app.baseUrl, invoice.pdfUrl, { cookie }),
    ]);
    const elapsed = Date.now() - started;
    for (const res of [first!, second!]) {
      t.is(res.status, 202);
      t.deepEqual(res.json, { status: 'rendering' });
      t.regex(res.headers.get('retry-after') ?? '', /^\d+$/);
    }
    t.true(elapsed >= 9_500 && elapsed < 14_000, `answered after ${elapsed} ms`);
    const jobs = await renderJobs(invoice.id);
    t.is(jobs.length, 1);
    t.like(jobs[0], { state: 'created', singleton_key: `${invoice.id}:1` });
    t.is(Number((await app.db('invoice_pdfs').count({ n: '*' }))[0]!.n), 0);
  },
);

test.serial(
  'once the worker runs, GET answers 200 with a PDF whose text holds the number, customer and total',
  async (t) => {
    worker = spawnPdfWorker(app.database.url);
    const res = await getPdfEventually(invoice.pdfUrl, { cookie });
    t.is(res.status, 200, worker.output());
    t.is(res.headers.get('content-type'), 'application/pdf');
    t.is(res.headers.get('content-disposition'), `inline; filename="${invoice.invoiceNumber}.pdf"`);
    t.is(res.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    t.is(Number(res.headers.get('content-length')), res.bytes.length);

    const text = await pdfText(res.bytes);
    t.is(invoice.total, '1484.97');
    for (const expected of [
      invoice.invoiceNumber,
      'Zoë Łukasiewicz',
      'Quantum Widgets Ltd',
      'Dublin',
      'IE9876543W',
      'Northwind Billing GmbH',
      'Hauptstraße 1',
      'invoices@northwind.test',
      'DE123456789',
      'Annual support plan',
      'Extra seats',
      '149.97',
      'Subtotal 1,349.97',
      'Tax (10%) 135.00',
      `Total USD ${displayAmount(invoice.total, 'USD')}`,
      'Amount due USD 1,484.97',
      'Status Draft',
    ]) {
      t.true(text.includes(expected), `${expected} in:\n${text}`);
    }
    t.deepEqual(
      (await renderJobs(invoice.id)).map((j) => j.state),
      ['completed'],
    );

    // Stored: the next GET answers at once with the same bytes.
    const started = Date.now();
    const again = await getBinary(app.baseUrl, invoice.pdfUrl, { cookie });
    t.is(again.status, 200);
    t.true(Date.now() - started < 2_000);
    t.true(again.bytes.equals(res.bytes));
  },
);

test.serial('changing the invoice yields a new PDF for its new content version', async (t) => {
  const before = await getBinary(app.baseUrl, invoice.pdfUrl, { cookie });
  t.is(before.status, 200);
  const put = await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'issued' },
  });
  t.is(put.status, 200);

  const after = await getPdfEventually(invoice.pdfUrl, { cookie });
  t.is(after.status, 200);
  t.false(after.bytes.equals(before.bytes));
  const text = await pdfText(after.bytes);
  t.true(text.includes('Status Issued'), text);
  t.true(text.includes(invoice.invoiceNumber));
  const versions = await app
    .db('invoice_pdfs')
    .where({ invoice_id: invoice.id })
    .orderBy('content_version')
    .pluck('content_version');
  const current = (await app.db('invoices').where({ id: invoice.id }).first('content_version')).content_version;
  t.true(current > 1);
  t.deepEqual(versions, [1, current]);
});

test.serial('the v1 API serves the key customer the same PDF', async (t) => {
  const key = await createApiKey(app.baseUrl, cookie, customer.id);
  const admin = await getBinary(app.baseUrl, invoice.pdfUrl, { cookie });
  const v1 = await getPdfEventually(`/api/v1/invoices/${invoice.id}/pdf`, { bearer: key });
  t.is(v1.status, 200);
  t.is(v1.headers.get('content-type'), 'application/pdf');
  t.true(v1.bytes.equals(admin.bytes));
});

test.serial('many invoices asked for at once are all rendered by the one worker', async (t) => {
  const invoices = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      createInvoice(app.baseUrl, cookie, {
        customerId: customer.id,
        lineItems: [{ description: `Batch item ${i}`, quantity: i + 1, unitPrice: '10.00' }],
      }),
    ),
  );
  const started = Date.now();
  const answers = await Promise.all(invoices.map((inv) => getPdfEventually(inv.pdfUrl, { cookie })));
  t.log(`${invoices.length} PDFs in ${Date.now() - started} ms`);
  for (const [i, res] of answers.entries()) {
    t.is(res.status, 200);
    const text = await pdfText(res.bytes);
    t.true(text.includes(invoices[i]!.invoiceNumber));
    t.true(text.includes(`Batch item ${i}`));
  }
});

test.serial('the worker exits cleanly on SIGTERM', async (t) => {
  const running = worker!;
  t.is(await running.stop(), 0, running.output());
  t.regex(running.output(), /chromium started/);
  t.regex(running.output(), /shutting down/);
  // One browser served every render of the run.
  t.is(running.output().match(/chromium started/g)?.length, 1);
});
