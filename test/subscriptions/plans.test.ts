/** Pricing plans (interface.md, Pricing plan; D-40): create, list, read, rename/deactivate; prices are immutable. */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { adminApi, productHttp, type Api } from './fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  api = adminApi(app, (await loginAsAdmin(app.baseUrl, app.db)).cookie);
});
test.after.always(async () => app?.close());

const planBody = (productId: string, extra: Record<string, unknown> = {}) => ({
  productId,
  name: 'Pro monthly',
  pricingModel: 'flat',
  billingCycle: 'monthly',
  basePrice: '29.9',
  currency: 'usd',
  ...extra,
});
const plansOf = async (productId: string) =>
  Number((await app.db('plans').where({ product_id: productId }).count<{ n: string }[]>('* as n'))[0]!.n);

test('POST /api/billing/plans: 201 with the D-40 fields, price normalised, currency upper-cased', async (t) => {
  const product = await productHttp(api);
  const res = await api('/api/billing/plans', { body: planBody(product.id) });
  t.is(res.status, 201, res.text);
  t.deepEqual(Object.keys(res.body).sort(), [
    'active',
    'basePrice',
    'billingCycle',
    'charges',
    'createdAt',
    'currency',
    'id',
    'name',
    'pricingModel',
    'productId',
    'taxRateIds',
    'updatedAt',
  ]);
  t.like(res.body, {
    productId: product.id,
    name: 'Pro monthly',
    taxRateIds: [],
    pricingModel: 'flat',
    billingCycle: 'monthly',
    basePrice: '29.90',
    currency: 'USD',
    active: true,
    // A flat plan has no usage charges (U-3).
    charges: [],
  });
  t.regex(res.body.id, /^[0-9a-f-]{36}$/);
  t.regex(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.deepEqual((await api(`/api/billing/plans/${res.body.id}`)).body, res.body);

  const yen = await api('/api/billing/plans', {
    body: planBody(product.id, { billingCycle: 'yearly', basePrice: '12000', currency: 'JPY' }),
  });
  t.like(yen.body, { billingCycle: 'yearly', basePrice: '12000', currency: 'JPY' });
});

test('a pricingModel other than flat, usage or hybrid is a 400 naming the values; nothing created', async (t) => {
  const product = await productHttp(api);
  for (const pricingModel of ['tiered', 'per_unit', 'FLAT', '', 7, null]) {
    const res = await api('/api/billing/plans', { body: planBody(product.id, { pricingModel }) });
    t.is(res.status, 400, String(pricingModel));
    t.is(res.body.error.code, 'invalid_request');
    const detail = res.body.error.details.find((d: { path: string }) => d.path === 'pricingModel');
    t.truthy(detail, JSON.stringify(res.body));
    t.regex(detail.message, /flat, usage, hybrid/);
  }
  const missing = await api('/api/billing/plans', { body: { ...planBody(product.id), pricingModel: undefined } });
  t.is(missing.status, 400);
  t.is(await plansOf(product.id), 0);
});

test('an unknown productId is 400 product_not_found; a malformed one is 400 invalid_request', async (t) => {
  const unknown = await api('/api/billing/plans', { body: planBody(randomUUID()) });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'product_not_found');
  t.deepEqual(unknown.body.error.details, [{ path: 'productId', message: 'no such product' }]);
  const malformed = await api('/api/billing/plans', { body: planBody('not-a-uuid') });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, 'invalid_request');
});

test('basePrice must be a non-negative decimal string: a JSON number says to send a string', async (t) => {
  const product = await productHttp(api);
  const number = await api('/api/billing/plans', { body: planBody(product.id, { basePrice: 29.9 }) });
  t.is(number.status, 400);
  t.is(number.body.error.code, 'invalid_request');
  t.regex(number.body.error.details[0].message, /string/);
  t.is(number.body.error.details[0].path, 'basePrice');
  for (const basePrice of ['-1', '1e3', 'ten', '']) {
    const res = await api('/api/billing/plans', { body: planBody(product.id, { basePrice }) });
    t.is(res.status, 400, basePrice);
  }
  for (const [field, value] of [
    ['billingCycle', 'weekly'],
    ['currency', 'US'],
    ['name', ' '],
  ] as const) {
    const res = await api('/api/billing/plans', { body: planBody(product.id, { [field]: value }) });
    t.is(res.status, 400, field);
    t.is(res.body.error.details[0].path, field);
  }
  t.is(await plansOf(product.id), 0);
});

test('list, filter by productId and active, read one; unknown and malformed ids are 404', async (t) => {
  const product = await productHttp(api);
  const a = (await api('/api/billing/plans', { body: planBody(product.id, { name: 'A' }) })).body;
  const b = (await api('/api/billing/plans', { body: planBody(product.id, { name: 'B' }) })).body;
  await api(`/api/billing/plans/${b.id}`, { method: 'PUT', body: { active: false } });

  const mine = await api(`/api/billing/plans?productId=${product.id}`);
  t.is(mine.status, 200);
  t.deepEqual(
    mine.body.map((p: { id: string }) => p.id),
    [a.id, b.id],
  );
  t.deepEqual(
    (await api(`/api/billing/plans?productId=${product.id}&active=true`)).body.map((p: { id: string }) => p.id),
    [a.id],
  );
  t.deepEqual(
    (await api(`/api/billing/plans?productId=${product.id}&active=false`)).body.map((p: { id: string }) => p.id),
    [b.id],
  );
  const all = await api('/api/billing/plans');
  t.true(all.body.some((p: { id: string }) => p.id === a.id));

  t.is((await api(`/api/billing/plans/${randomUUID()}`)).status, 404);
  t.is((await api('/api/billing/plans/nope')).status, 404);
  t.is((await api(`/api/billing/plans/${randomUUID()}`, { method: 'PUT', body: { name: 'x' } })).status, 404);
});

test(
  'PUT renames and (de)activates; basePrice, currency and billingCycle are immutable: refused as unknown fields ' +
    '(D-90)',
  async (t) => {
    const product = await productHttp(api);
    const plan = (await api('/api/billing/plans', { body: planBody(product.id) })).body;
    const renamed = await api(`/api/billing/plans/${plan.id}`, {
      method: 'PUT',
      body: { name: 'Pro (legacy)', active: false },
    });
    t.is(renamed.status, 200);
    t.like(renamed.body, { id: plan.id, name: 'Pro (legacy)', active: false, basePrice: '29.90' });

    const priced = await api(`/api/billing/plans/${plan.id}`, {
      method: 'PUT',
      body: { basePrice: '99.00', currency: 'EUR', billingCycle: 'yearly', pricingModel: 'tiered' },
    });
    t.is(priced.status, 400);
    t.deepEqual(
      priced.body.error.details.map((d: { path: string }) => d.path),
      ['basePrice', 'currency', 'billingCycle', 'pricingModel'],
    );
    const stored = await app.db('plans').where({ id: plan.id }).first();
    t.is(stored.base_price, '29.9');

    t.like((await api(`/api/billing/plans/${plan.id}`, { method: 'PUT', body: { active: true } })).body, {
      active: true,
      name: 'Pro (legacy)',
    });
    const bad = await api(`/api/billing/plans/${plan.id}`, { method: 'PUT', body: { active: 'yes' } });
    t.is(bad.status, 400);
    t.is((await api(`/api/billing/plans/${plan.id}`, { method: 'PUT', body: { name: '' } })).status, 400);
  },
);

test('plan routes need an admin session (401) and create nothing without one', async (t) => {
  const product = await productHttp(api);
  t.is((await request(app.baseUrl, '/api/billing/plans', { body: planBody(product.id) })).status, 401);
  t.is((await request(app.baseUrl, '/api/billing/plans')).status, 401);
  t.is(await plansOf(product.id), 0);
});
