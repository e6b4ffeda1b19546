import test from 'ava';
import { refreshProductMetrics } from '../../src/products/metrics.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const DAY = 86_400_000;

async function plan(productId: string, cycle: string, price: string, currency = 'USD') {
  const [row] = await app
    .db('plans')
    .insert({
      product_id: productId,
      name: `${cycle} ${price}`,
      pricing_model: 'flat',
      billing_cycle: cycle,
      base_price: price,
      currency,
    })
    .returning('id');
  return row.id as string;
}

async function subscription(planId: string, status: string, createdAt: Date, canceledAt: Date | null = null) {
  const customer = await insertCustomer(app.db);
  await app.db('subscriptions').insert({
    customer_id: customer.id,
    plan_id: planId,
    status,
    billing_cycle: 'monthly',
    billing_anchor: createdAt,
    period_number: 0,
    current_period_start: createdAt,
    current_period_end: new Date(createdAt.getTime() + 30 * DAY),
    created_at: createdAt,
    canceled_at: canceledAt,
  });
}

test('metrics are computed from subscriptions, licenses and activations (D-20)', async (t) => {
  const asOf = new Date('2030-06-01T12:00:00.000Z');
  const [product] = await app
    .db('products')
    .insert({ name: 'Metered', product_type: 'saas', price: '30' })
    .returning('id');
  const [other] = await app
    .db('products')
    .insert({ name: 'Untouched', product_type: 'api', price: '1' })
    .returning('id');
  const monthly = await plan(product.id, 'monthly', '30.00');
  const yearly = await plan(product.id, 'yearly', '120.00');
  const quarterly = await plan(product.id, 'quarterly', '90.00');
  const euro = await plan(product.id, 'monthly', '500.00', 'EUR');
  const longAgo = new Date(asOf.getTime() - 60 * DAY);

  await subscription(monthly, 'active', longAgo); // 30.00 a month, there 30 days ago
  await subscription(yearly, 'active', asOf); // 10.00 a month
  await subscription(quarterly, 'active', asOf); // 30.00 a month
  await subscription(euro, 'active', asOf); // another currency: not summed
  await subscription(monthly, 'trialing', asOf); // a user, no revenue
  await subscription(monthly, 'canceled', longAgo, new Date(asOf.getTime() - 10 * DAY)); // churned in the window
  await subscription(monthly, 'canceled', longAgo, new Date(asOf.getTime() - 40 * DAY)); // churned before the window

  const licensee = await insertCustomer(app.db);
  const [license] = await app
    .db('licenses')
    .insert({ license_key: 'LIC-MTRC-0000-0001', customer_id: licensee.id, product_id: product.id })
    .returning('id');
  await app
    .db('licenses')
    .insert({ license_key: 'LIC-MTRC-0000-0002', customer_id: licensee.id, product_id: product.id, status: 'revoked' });
  await app.db('license_activations').insert([
    { license_id: license.id, device_id: 'a', device_name: 'A', last_seen_at: new Date(asOf.getTime() - 3600_000) },
    {
      license_id: license.id,
      device_id: 'b',
      device_name: 'B',
      last_seen_at: new Date(asOf.getTime() - 23 * 3600_000),
    },
    {
      license_id: license.id,
      device_id: 'c',
      device_name: 'C',
      last_seen_at: new Date(asOf.getTime() - 25 * 3600_000),
    },
  ]);

  const result = await refreshProductMetrics(app.db, asOf);
  t.true(result.products >= 2);
  const read = await request(app.baseUrl, `/api/products/${product.id}`, { cookie });
  t.like(read.body, {
    monthlyRevenue: '70.00',
    // 4 active (one in EUR) + 1 trialing subscriber + 1 licensee
    activeUsers: 6,
    dailyActiveUsers: 2,
    // 1 canceled in the last 30 days / 2 there 30 days ago (the monthly and the one canceled 10 days ago)
    churnRate: '0.5000',
    metricsRefreshedAt: asOf.toISOString(),
  });
  const untouched = await request(app.baseUrl, `/api/products/${other.id}`, { cookie });
  t.like(untouched.body, { monthlyRevenue: '0.00', activeUsers: 0, dailyActiveUsers: 0, churnRate: '0.0000' });
});
