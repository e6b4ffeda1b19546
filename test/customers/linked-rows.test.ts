/**
 * Customers embed their products and
 * subscriptions (D-22), products in use refuse DELETE (D-21) and customers with billing history too.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createCustomer, createProduct } from './fixtures.ts';
import { invoice, license, subscribe } from './linked-rows.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

test('a customer embeds the distinct products of its licenses and subscriptions, by name', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie);
  const other = await createCustomer(app.baseUrl, cookie);
  const zeta = await createProduct(app.baseUrl, cookie, { name: 'Zeta', productType: 'api' });
  const alpha = await createProduct(app.baseUrl, cookie, { name: 'Alpha', productType: 'licensed' });
  const unrelated = await createProduct(app.baseUrl, cookie, { name: 'Unrelated' });
  await license(app.db, customer.id, alpha.id);
  await license(app.db, customer.id, alpha.id);
  const subscriptionId = await subscribe(app.db, customer.id, zeta.id);
  await subscribe(app.db, customer.id, alpha.id);
  await license(app.db, other.id, unrelated.id);

  const expected = [
    { id: alpha.id, name: 'Alpha', productType: 'licensed' },
    { id: zeta.id, name: 'Zeta', productType: 'api' },
  ];
  const list = await api('/api/customers?limit=500');
  t.deepEqual(list.body.find((c: { id: string }) => c.id === customer.id).products, expected);
  t.deepEqual(list.body.find((c: { id: string }) => c.id === other.id).products, [
    { id: unrelated.id, name: 'Unrelated', productType: 'saas' },
  ]);

  const detail = await api(`/api/customers/${customer.id}`);
  t.deepEqual(detail.body.products, expected);
  t.is(detail.body.subscriptions.length, 2);
  t.like(detail.body.subscriptions[0], {
    id: subscriptionId,
    customerId: customer.id,
    status: 'active',
    billingCycle: 'monthly',
    cancelAtPeriodEnd: false,
    trialEnd: null,
  });
  t.regex(detail.body.subscriptions[0].currentPeriodEnd, /Z$/);
});

test('DELETE of a product used by a plan or a license is 409 product_in_use and keeps it', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie);
  const planned = await createProduct(app.baseUrl, cookie, { name: 'Planned' });
  const licensed = await createProduct(app.baseUrl, cookie, { name: 'Licensed' });
  const unused = await createProduct(app.baseUrl, cookie, { name: 'Unused' });
  await api('/api/billing/plans', {
    body: {
      productId: planned.id,
      name: 'P',
      pricingModel: 'flat',
      billingCycle: 'monthly',
      basePrice: '1.00',
      currency: 'USD',
    },
  });
  await license(app.db, customer.id, licensed.id);
  for (const product of [planned, licensed]) {
    const res = await api(`/api/products/${product.id}`, { method: 'DELETE' });
    t.is(res.status, 409, product.name);
    t.is(res.body.error.code, 'product_in_use');
    t.deepEqual((await api(`/api/products/${product.id}`)).body, product);
  }
  t.is((await api(`/api/products/${unused.id}`, { method: 'DELETE' })).status, 204);
});

test('DELETE of a customer with invoices is 409 customer_has_billing_history and keeps it', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie);
  await invoice(app.db, customer.id);
  const res = await api(`/api/customers/${customer.id}`, { method: 'DELETE' });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'customer_has_billing_history');
  t.is((await api(`/api/customers/${customer.id}`)).status, 200);
});

test('DELETE of a customer that other rows still reference is a 409, not a 500', async (t) => {
  const customer = await createCustomer(app.baseUrl, cookie);
  await license(app.db, customer.id, (await createProduct(app.baseUrl, cookie)).id);
  const res = await api(`/api/customers/${customer.id}`, { method: 'DELETE' });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'customer_in_use');
  t.is((await api(`/api/customers/${customer.id}`)).status, 200);
});
