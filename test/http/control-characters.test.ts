import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

// D-95: names, emails, codes, keys and ids refuse every C0/C1 control character; free text allows tab and newline.

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const count = async (table: string) => Number((await app.db(table).count({ n: '*' }).first())!.n);
const PLAIN = 'must not contain control characters';
const FREE = 'must not contain control characters other than tab and newline';

// One of each kind: C0 (bell, escape, a newline at the end), DEL and C1 (NEL, CSI).
const CONTROLS: [string, string][] = [
  ['a bell', 'a\u0007b'],
  ['an escape sequence', 'a\u001b[31mb'],
  ['a trailing newline', 'Ada\n'],
  ['DEL', 'a\u007fb'],
  ['C1 NEL', 'a\u0085b'],
  ['C1 CSI', 'a\u009bb'],
];

for (const [label, name] of CONTROLS) {
  test.serial(`a customer name with ${label} is refused naming name, nothing created`, async (t) => {
    const before = await count('customers');
    const res = await request(app.baseUrl, '/api/customers', { cookie, body: { name, email: 'ctl@example.test' } });
    t.is(res.status, 400);
    t.deepEqual(res.body.error.details, [{ path: 'name', message: PLAIN }]);
    t.is(await count('customers'), before);
  });
}

test.serial('an address keeps its tabs and newlines (CRLF too) but refuses other control characters', async (t) => {
  const address = '1 Main St\r\nSpringfield\tIL';
  const ok = await request(app.baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Ada', email: 'ada@example.test', billingAddress: address },
  });
  t.is(ok.status, 201);
  t.is(ok.body.billingAddress, address);
  const before = await count('customers');
  for (const billingAddress of ['1 Main St\u000bSpringfield', 'a\rb', 'a\u0000b', 'a\u0085b']) {
    const res = await request(app.baseUrl, '/api/customers', {
      cookie,
      body: { name: 'Bob', email: 'bob@example.test', billingAddress },
    });
    t.is(res.status, 400);
    t.deepEqual(
      res.body.error.details
        .filter((d: { path: string }) => d.path === 'billingAddress')
        .map((d: { message: string }) => d.message),
      [FREE],
    );
  }
  t.is(await count('customers'), before);
});

test.serial('a PUT with a control character changes nothing', async (t) => {
  const customer = await insertCustomer(app.db, { name: 'Before' });
  const res = await request(app.baseUrl, `/api/customers/${customer.id}`, {
    method: 'PUT',
    cookie,
    body: { name: 'After', taxId: 'DE\u0000123' },
  });
  t.is(res.status, 400);
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['taxId'],
  );
  t.is((await app.db('customers').where({ id: customer.id }).first()).name, 'Before');
});

test.serial(
  'free text elsewhere: an invoice line description and a product description allow newlines, not escapes',
  async (t) => {
    const product = await request(app.baseUrl, '/api/products', {
      cookie,
      body: { name: 'P', productType: 'saas', price: '1.00', description: 'Line one\nLine two' },
    });
    t.is(product.status, 201);
    const customer = await insertCustomer(app.db);
    const before = await count('invoices');
    const res = await request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: { customerId: customer.id, lineItems: [{ description: 'Seat\u001b[2J', quantity: 1, unitPrice: '1.00' }] },
    });
    t.is(res.status, 400);
    t.deepEqual(res.body.error.details, [{ path: 'lineItems.0.description', message: FREE }]);
    t.is(await count('invoices'), before);
  },
);

test.serial('codes, keys and names of other domains refuse control characters', async (t) => {
  const product = await request(app.baseUrl, '/api/products', {
    cookie,
    body: { name: 'P\tQ', productType: 'saas', price: '1.00' },
  });
  t.deepEqual(product.body.error.details, [{ path: 'name', message: PLAIN }]);
  const endpoint = await request(app.baseUrl, '/api/billing/webhooks/endpoints', {
    cookie,
    body: { url: 'https://example.test/\nhook', events: ['*'] },
  });
  t.is(endpoint.status, 400);
  t.deepEqual(endpoint.body.error.details, [{ path: 'url', message: PLAIN }]);
  const login = await request(app.baseUrl, '/api/auth/login', {
    body: { email: 'a\u0000@example.test', password: 'x' },
  });
  t.is(login.status, 400);
  t.deepEqual(
    login.body.error.details.map((d: { path: string }) => d.path),
    ['email'],
  );
});

test.serial(
  'an email, a coupon code and a payment reference with a control character are refused, not trimmed into shape',
  async (t) => {
    for (const email of ['x@example.test\n', '\tx@example.test', 'x@example.test\r\n']) {
      const res = await request(app.baseUrl, '/api/customers', { cookie, body: { name: 'E', email } });
      t.is(res.status, 400);
      t.deepEqual(res.body.error.details, [{ path: 'email', message: PLAIN }]);
    }
    const coupon = await request(app.baseUrl, '/api/billing/coupons', {
      cookie,
      body: { code: 'NL\n', percentOff: '10', duration: 'once' },
    });
    t.is(coupon.status, 400);
    t.deepEqual(
      coupon.body.error.details.map((d: { path: string }) => d.path),
      ['code'],
    );
    t.is(await count('coupons'), 0);
    const customer = await request(app.baseUrl, '/api/customers', {
      cookie,
      body: { name: 'Payer', email: 'payer@example.test' },
    });
    const invoice = await request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: {
        customerId: customer.body.id,
        status: 'issued',
        lineItems: [{ description: 'Seat', quantity: 1, unitPrice: '10.00' }],
      },
    });
    for (const providerReference of ['BT-1\n', 'a\u0001b', 'x\u0085']) {
      const res = await request(app.baseUrl, '/api/billing/payments', {
        cookie,
        body: { invoiceId: invoice.body.id, amount: '1.00', paymentMethod: 'bank_transfer', providerReference },
      });
      t.is(res.status, 400);
      t.deepEqual(res.body.error.details, [{ path: 'providerReference', message: PLAIN }]);
    }
    t.is(await count('payments'), 0);
  },
);
