/** The v1 API answers only for the API key's customer (D-15): GET /api/v1/customer and /api/v1/products. */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createCustomer, createProduct } from '../customers/fixtures.ts';
import { license, subscribe } from '../customers/linked-rows.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

async function keyFor(customerId: string): Promise<string> {
  const res = await request(app.baseUrl, '/api/api-keys', { cookie, body: { name: 'v1 test', customerId } });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return res.body.key;
}

// Customers without licenses or subscriptions.
test.serial('GET /api/v1/customer answers the key customer in the admin single-read shape', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie, {
    name: 'Key Owner',
    company: 'Owner Co',
    tier: 'starter',
  });
  const res = await request(app.baseUrl, '/api/v1/customer', { bearer: await keyFor(customer.id) });
  t.is(res.status, 200);
  t.deepEqual(res.body, (await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie })).body);
  t.like(res.body, { id: customer.id, name: 'Key Owner', products: [], subscriptions: [] });
});

test.serial('GET /api/v1/products is [] while no licenses or subscriptions exist', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie);
  await createProduct(app.baseUrl, cookie, { name: 'Catalog only' });
  const res = await request(app.baseUrl, '/api/v1/products', { bearer: await keyFor(customer.id) });
  t.is(res.status, 200);
  t.deepEqual(res.body, []);
});

test('a key of customer A only ever sees A', async (t) => {
  const a = await createCustomer(app.baseUrl, cookie, { name: 'Customer A' });
  const b = await createCustomer(app.baseUrl, cookie, { name: 'Customer B' });
  const forA = await createProduct(app.baseUrl, cookie, { name: 'For A', productType: 'licensed', price: '5' });
  const subscribedByA = await createProduct(app.baseUrl, cookie, {
    name: 'Subscribed by A',
    productType: 'saas',
    price: '9.9',
  });
  const forB = await createProduct(app.baseUrl, cookie, { name: 'For B' });
  await license(app.db, a.id, forA.id);
  await subscribe(app.db, a.id, subscribedByA.id);
  await license(app.db, b.id, forB.id);
  const keyA = await keyFor(a.id);
  const keyB = await keyFor(b.id);

  // Nothing in the request can point a key at another customer: a header is ignored, a query parameter refused (D-90).
  const own = await request(app.baseUrl, '/api/v1/customer', { bearer: keyA, headers: { 'x-customer-id': b.id } });
  t.is(own.status, 200);
  t.is(own.body.id, a.id);
  for (const path of [
    `/api/v1/customer?customerId=${b.id}`,
    `/api/v1/customer?id=${b.id}`,
    `/api/v1/products?customerId=${b.id}`,
  ]) {
    const res = await request(app.baseUrl, path, { bearer: keyA });
    t.is(res.status, 400, path);
    t.is(res.body.error.details[0].message, 'unknown field', path);
  }
  t.is((await request(app.baseUrl, '/api/v1/customer', { bearer: keyB })).body.id, b.id);

  const productsA = await request(app.baseUrl, '/api/v1/products', { bearer: keyA });
  t.is(productsA.status, 200);
  t.deepEqual(
    productsA.body.map((p: { id: string }) => p.id),
    [forA.id, subscribedByA.id],
  );
  t.like(productsA.body[1], {
    name: 'Subscribed by A',
    productType: 'saas',
    price: '9.90',
    currency: 'USD',
    status: 'active',
  });
  // The seller's metrics across all customers are not shown to one customer.
  t.false('monthlyRevenue' in productsA.body[0]);
  t.false('activeUsers' in productsA.body[0]);
  const productsB = await request(app.baseUrl, '/api/v1/products', { bearer: keyB });
  t.deepEqual(
    productsB.body.map((p: { id: string }) => p.id),
    [forB.id],
  );

  // Another customer's records through the admin paths are closed to a key.
  for (const path of [
    `/api/customers/${b.id}`,
    '/api/customers',
    '/api/products',
    `/api/search/customers?q=customer`,
  ]) {
    const res = await request(app.baseUrl, path, { bearer: keyA });
    t.is(res.status, 401, path);
  }
});

test('v1 refuses a session cookie and a missing or unknown key (401)', async (t) => {
  for (const path of ['/api/v1/customer', '/api/v1/products']) {
    for (const options of [{ cookie }, {}, { bearer: 'bsk_unknown' }]) {
      const res = await request(app.baseUrl, path, options);
      t.is(res.status, 401, `${path} ${JSON.stringify(options)}`);
      t.is(res.body.error.code, 'unauthenticated');
    }
  }
});
