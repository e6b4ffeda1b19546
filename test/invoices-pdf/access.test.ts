/**
 * Who may read invoices and their PDFs: the admin session on /api/billing, the customer's API key on
 * /api/v1 (D-15). No worker runs here: every case is decided before a render would be asked for.
 */
import test from 'ava';
import { renderInvoicePdfJob } from '../../src/invoices/pdf/render-pdf.job.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createApiKey, createCustomer, createInvoice, getBinary } from './helpers.ts';

let app: TestApp;
let cookie: string;
let alice: { id: string; key: string; invoices: Awaited<ReturnType<typeof createInvoice>>[] };
let bob: { id: string; key: string; invoices: Awaited<ReturnType<typeof createInvoice>>[] };

test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  const make = async (name: string, count: number) => {
    const customer = await createCustomer(app.baseUrl, cookie, { name });
    const invoices = [];
    for (let i = 0; i < count; i++) {
      invoices.push(
        await createInvoice(app.baseUrl, cookie, {
          customerId: customer.id,
          lineItems: [{ description: `${name} item ${i}`, quantity: 1, unitPrice: `${10 + i}.00` }],
          status: 'issued',
        }),
      );
    }
    // A draft (not yet sent) beside them, which the customer's key never sees (test/v1/drafts.test.ts).
    await createInvoice(app.baseUrl, cookie, {
      customerId: customer.id,
      lineItems: [{ description: `${name} draft`, quantity: 1, unitPrice: '1.00' }],
    });
    return { id: customer.id, key: await createApiKey(app.baseUrl, cookie, customer.id), invoices };
  };
  alice = await make('Alice', 3);
  bob = await make('Bob', 1);
});
test.after.always(async () => app?.close());

const renderJobCount = async () =>
  Number(
    (await app.db.raw(`select count(*)::int as n from pgboss.job where name = ?`, [renderInvoicePdfJob.name])).rows[0]
      .n,
  );

test('the admin PDF route refuses no session, a customer API key and a non-admin user (401/401/403)', async (t) => {
  const path = alice.invoices[0]!.pdfUrl;
  t.is(path, `/api/billing/invoices/${alice.invoices[0]!.id}/pdf`);
  const none = await getBinary(app.baseUrl, path);
  t.is(none.status, 401);
  t.is(none.json.error.code, 'unauthenticated');
  t.is((await getBinary(app.baseUrl, path, { bearer: alice.key })).status, 401);
  const { cookie: viewer } = await loginAs(app.baseUrl, app.db, 'viewer');
  t.is((await getBinary(app.baseUrl, path, { cookie: viewer })).status, 403);
});

test('the admin PDF route answers 404 for an unknown or malformed id without queuing anything', async (t) => {
  const before = await renderJobCount();
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const res = await getBinary(app.baseUrl, `/api/billing/invoices/${id}/pdf`, { cookie });
    t.is(res.status, 404, id);
    t.is(res.json.error.code, 'not_found');
  }
  t.is(await renderJobCount(), before);
});

test(
  "GET /api/v1/invoices lists only the key customer's invoices, serialised as the admin API but with v1 PDF " + 'paths',
  async (t) => {
    // Another customer's id cannot even be asked for: the key is the scope, and the parameter is unknown (D-90).
    const foreign = await request(app.baseUrl, `/api/v1/invoices?customerId=${bob.id}`, { bearer: alice.key });
    t.is(foreign.status, 400);
    t.deepEqual(foreign.body.error.details, [{ path: 'query.customerId', message: 'unknown field' }]);
    const res = await request(app.baseUrl, '/api/v1/invoices', { bearer: alice.key });
    t.is(res.status, 200);
    t.deepEqual(
      res.body.map((i: { id: string }) => i.id),
      alice.invoices.map((i) => i.id),
    );
    const admin = await request(app.baseUrl, `/api/billing/invoices/${alice.invoices[0]!.id}`, { cookie });
    t.deepEqual(res.body[0], { ...admin.body, pdfUrl: `/api/v1/invoices/${alice.invoices[0]!.id}/pdf` });

    const bobs = await request(app.baseUrl, '/api/v1/invoices', { bearer: bob.key });
    t.deepEqual(
      bobs.body.map((i: { id: string }) => i.id),
      [bob.invoices[0]!.id],
    );
  },
);

test('GET /api/v1/invoices pages with limit and startingAfter and filters by status', async (t) => {
  const first = await request(app.baseUrl, '/api/v1/invoices?limit=2', { bearer: alice.key });
  t.is(first.body.length, 2);
  const link = first.headers.get('link') ?? '';
  t.regex(link, /rel="next"/);
  const next = /<([^>]+)>/.exec(link)![1]!;
  const second = await request(app.baseUrl, next, { bearer: alice.key });
  t.deepEqual(
    [...first.body, ...second.body].map((i: { id: string }) => i.id),
    alice.invoices.map((i) => i.id),
  );
  t.is(second.headers.get('link'), null);

  t.deepEqual((await request(app.baseUrl, '/api/v1/invoices?status=paid', { bearer: alice.key })).body, []);
  t.is((await request(app.baseUrl, '/api/v1/invoices?status=issued', { bearer: alice.key })).body.length, 3);
  t.is((await request(app.baseUrl, '/api/v1/invoices?status=bogus', { bearer: alice.key })).status, 400);
});

test("GET /api/v1/invoices/:id answers the key customer's invoice and 404 for another customer's", async (t) => {
  const own = await request(app.baseUrl, `/api/v1/invoices/${alice.invoices[1]!.id}`, { bearer: alice.key });
  t.is(own.status, 200);
  t.like(own.body, {
    id: alice.invoices[1]!.id,
    customerId: alice.id,
    pdfUrl: `/api/v1/invoices/${alice.invoices[1]!.id}/pdf`,
  });

  const other = await request(app.baseUrl, `/api/v1/invoices/${bob.invoices[0]!.id}`, { bearer: alice.key });
  t.is(other.status, 404);
  const unknown = await request(app.baseUrl, '/api/v1/invoices/00000000-0000-4000-8000-000000000000', {
    bearer: alice.key,
  });
  // Another customer's invoice reads exactly like one that does not exist.
  t.deepEqual(other.body, unknown.body);
});

test(
  "GET /api/v1/invoices/:id/pdf answers 404 at once for another customer's invoice and queues " + 'nothing',
  async (t) => {
    const before = await renderJobCount();
    const started = Date.now();
    const res = await getBinary(app.baseUrl, `/api/v1/invoices/${bob.invoices[0]!.id}/pdf`, { bearer: alice.key });
    t.is(res.status, 404);
    t.is(res.json.error.code, 'not_found');
    t.true(Date.now() - started < 2_000);
    t.is(await renderJobCount(), before);
  },
);

test('the v1 invoice routes refuse a missing or unknown key and an admin session cookie (401)', async (t) => {
  const id = alice.invoices[0]!.id;
  for (const path of ['/api/v1/invoices', `/api/v1/invoices/${id}`, `/api/v1/invoices/${id}/pdf`]) {
    for (const auth of [{}, { bearer: 'bsk_not_a_key' }, { cookie }]) {
      const res = await getBinary(app.baseUrl, path, auth);
      t.is(res.status, 401, `${path} ${JSON.stringify(Object.keys(auth))}`);
    }
  }
});
