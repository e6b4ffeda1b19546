import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

// D-91: an amount finer than its currency's minor unit is refused (invalid_amount, naming the field), never rounded.

let app: TestApp;
let cookie: string;
let productId: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  productId = (
    await request(app.baseUrl, '/api/products', { cookie, body: { name: 'Sync', productType: 'saas', price: '10.00' } })
  ).body.id;
});
test.after.always(async () => app?.close());

const count = async (table: string) => Number((await app.db(table).count({ n: '*' }).first())!.n);

/** Posts `body` to `path`, expects invalid_amount naming exactly `paths`, and that `table` gained no row. */
async function refused(
  t: import('ava').ExecutionContext,
  path: string,
  body: unknown,
  table: string,
  paths: string[],
  message: RegExp,
) {
  const before = await count(table);
  const res = await request(app.baseUrl, path, { cookie, body });
  t.is(res.status, 400, JSON.stringify(res.body));
  t.is(res.body.error.code, 'invalid_amount');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    paths,
  );
  t.regex(res.body.error.details[0].message, message);
  t.is(await count(table), before);
}

test.serial('a product price of "1.999" USD is refused, not stored as 2.00', async (t) => {
  await refused(
    t,
    '/api/products',
    { name: 'X', productType: 'saas', price: '1.999' },
    'products',
    ['price'],
    /at most 2 decimal places in USD/,
  );
});

test.serial('a product update is checked against the currency the product has', async (t) => {
  const jpy = (
    await request(app.baseUrl, '/api/products', {
      cookie,
      body: { name: 'Yen', productType: 'saas', price: '1000', currency: 'JPY' },
    })
  ).body;
  t.is(jpy.price, '1000');
  const res = await request(app.baseUrl, `/api/products/${jpy.id}`, {
    method: 'PUT',
    cookie,
    body: { price: '1000.5' },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_amount');
  t.deepEqual(res.body.error.details, [{ path: 'price', message: 'must be a whole number of JPY' }]);
  t.is((await app.db('products').where({ id: jpy.id }).first()).price, '1000');
});

test.serial('a plan price uses the currency sent beside it: 0 decimals for JPY, 3 for BHD', async (t) => {
  const plan = { productId, name: 'P', pricingModel: 'flat', billingCycle: 'monthly' };
  await refused(
    t,
    '/api/billing/plans',
    { ...plan, basePrice: '100.5', currency: 'JPY' },
    'plans',
    ['basePrice'],
    /whole number of JPY/,
  );
  await refused(
    t,
    '/api/billing/plans',
    { ...plan, basePrice: '1.2345', currency: 'BHD' },
    'plans',
    ['basePrice'],
    /at most 3 decimal places in BHD/,
  );
  const bhd = await request(app.baseUrl, '/api/billing/plans', {
    cookie,
    body: { ...plan, basePrice: '1.234', currency: 'BHD' },
  });
  t.is(bhd.status, 201);
  t.is(bhd.body.basePrice, '1.234');
});

test.serial(
  "an invoice line's unit price may be finer than the currency: the line amount rounds once (D-51)",
  async (t) => {
    const customer = await insertCustomer(app.db);
    const res = await request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: {
        customerId: customer.id,
        lineItems: [{ description: 'Calls', quantity: 3, unitPrice: '0.333' }],
        taxRate: '0',
      },
    });
    t.is(res.status, 201);
    t.is(res.body.lineItems[0].amount, '1.00');
    // The price the line was computed from is the price shown, not one rounded to the currency.
    t.is(res.body.lineItems[0].unitPrice, '0.333');
    const widgets = await request(app.baseUrl, '/api/billing/invoices', {
      cookie,
      body: {
        customerId: customer.id,
        lineItems: [
          { description: 'Widget', quantity: 3, unitPrice: '19.995' },
          { description: 'Seat', quantity: 1, unitPrice: '20' },
        ],
      },
    });
    t.deepEqual(
      widgets.body.lineItems.map((l: { unitPrice: string; amount: string }) => [l.unitPrice, l.amount]),
      [
        ['19.995', '59.99'],
        ['20.00', '20.00'],
      ],
    );
  },
);

test.serial('a coupon amount and a store credit use their currency', async (t) => {
  await refused(
    t,
    '/api/billing/coupons',
    { code: 'TENYEN', amountOff: '10.5', currency: 'JPY', duration: 'once' },
    'coupons',
    ['amountOff'],
    /whole number of JPY/,
  );
  const customer = await insertCustomer(app.db);
  await refused(
    t,
    '/api/billing/credits',
    { customerId: customer.id, amount: '1.0001', currency: 'KWD' },
    'credit_ledger',
    ['amount'],
    /at most 3 decimal places in KWD/,
  );
});

test.serial('trailing zeros within the minor unit are exact and accepted', async (t) => {
  const res = await request(app.baseUrl, '/api/products', {
    cookie,
    body: { name: 'Z', productType: 'saas', price: '5.5000' },
  });
  t.is(res.status, 201);
  t.is(res.body.price, '5.50');
});
