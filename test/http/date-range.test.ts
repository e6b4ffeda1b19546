/**
 * Issue 33 item 7: a date outside years 1 to 9999 (year 0, which PostgreSQL does not have, or year 10000) is a
 * 400 naming the field, through the API and through the console's form, and nothing is created; the years at
 * either end are accepted.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { OUT_OF_RANGE_DATES } from '../security/schema-arbitraries.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const count = async (table: string) => Number((await app.db(table).count({ n: '*' }).first())!.n);

// Year 0 typed, or reached by the offset; year 10000 typed, or reached by the offset.
const OUT_OF_RANGE = OUT_OF_RANGE_DATES;

test.serial('API: a dueDate in year 0 or year 10000 is 400 naming dueDate, nothing created', async (t) => {
  const customer = await insertCustomer(app.db);
  const invoice = (dueDate: string) =>
    request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: { customerId: customer.id, lineItems: [{ description: 'Seat', quantity: 1, unitPrice: '10.00' }], dueDate },
    });
  const before = await count('invoices');
  for (const dueDate of OUT_OF_RANGE) {
    const res = await invoice(dueDate);
    t.is(res.status, 400, `${dueDate}: ${res.text}`);
    t.is(res.body.error?.code, 'invalid_request', dueDate);
    t.deepEqual(
      res.body.error?.details?.map((d: { path: string }) => d.path),
      ['dueDate'],
      dueDate,
    );
  }
  t.is(await count('invoices'), before);
  for (const dueDate of ['0001-01-01', '9999-12-31', '9999-12-31T23:59:59.999Z']) {
    const res = await invoice(dueDate);
    t.is(res.status, 201, `${dueDate}: ${res.text}`);
    t.is(res.body.dueDate, new Date(dueDate.length === 10 ? `${dueDate}T00:00:00Z` : dueDate).toISOString());
  }
});

test.serial('other date fields share the rule: a license expiresAt in year 0', async (t) => {
  const customer = await insertCustomer(app.db);
  const [product] = await app
    .db('products')
    .insert({ name: 'Year zero', product_type: 'saas', price: '10.00' })
    .returning('id');
  const licenses = await count('licenses');
  const license = await request(app.baseUrl, '/api/licenses', {
    cookie,
    body: { customerId: customer.id, productId: product.id, expiresAt: '0000-01-01' },
  });
  t.is(license.status, 400, license.text);
  t.deepEqual(
    license.body.error?.details?.map((d: { path: string }) => d.path),
    ['expiresAt'],
  );
  t.is(await count('licenses'), licenses);
});

test.serial(
  "console: the invoice form's due date in year 0 is refused beside the field, nothing created",
  async (t) => {
    const customer = await insertCustomer(app.db);
    // The form as the console serves it: its CSRF field and cookie, whatever their scheme.
    const page = await fetch(`${app.baseUrl}/admin/invoices?create=1`, { headers: { cookie } });
    const html = await page.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    t.truthy(token, 'the page has a CSRF field');
    const cookies = [cookie, ...page.headers.getSetCookie().map((c) => c.split(';')[0]!)].join('; ');
    const before = await count('invoices');
    for (const dueDate of ['0000-01-01', '10000-01-01']) {
      const res = await fetch(`${app.baseUrl}/admin/invoices`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          _csrf: token!,
          customerId: customer.id,
          'lineItems[0][description]': 'Seat',
          'lineItems[0][quantity]': '1',
          'lineItems[0][unitPrice]': '10.00',
          dueDate,
        }).toString(),
      });
      const body = await res.text();
      t.is(res.status, 400, `${dueDate}: ${body.slice(0, 300)}`);
      t.regex(body, /name="dueDate"/);
    }
    t.is(await count('invoices'), before);
  },
);
