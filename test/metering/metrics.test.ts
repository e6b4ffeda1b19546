import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, type Api, planHttp, productHttp } from '../subscriptions/fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  api = adminApi(app, (await loginAsAdmin(app.baseUrl, app.db)).cookie);
});
test.after.always(async () => app?.close());

let n = 0;
const code = (prefix = 'm') => `${prefix}_${++n}_${Date.now() % 100000}`;
const metric = async (body: Record<string, unknown> = {}) => {
  const res = await api('/api/billing/metrics', {
    body: { code: code(), name: 'Calls', aggregation: 'count', ...body },
  });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
};
const count = async (table: string) => Number((await app.db(table).count('* as n'))[0]!.n);

test('U-1/U-2: create, read, list, update and delete a metric', async (t) => {
  const created = await api('/api/billing/metrics', {
    body: { code: code('api'), name: 'API calls', description: 'Requests', aggregation: 'sum', field: 'units' },
  });
  t.is(created.status, 201, created.text);
  t.like(created.body, { name: 'API calls', description: 'Requests', aggregation: 'sum', field: 'units' });
  t.truthy(created.body.createdAt);
  const read = await api(`/api/billing/metrics/${created.body.id}`);
  t.deepEqual(read.body, created.body);
  const list = await api('/api/billing/metrics?limit=100');
  t.true(list.body.some((m: { id: string }) => m.id === created.body.id));
  const renamed = await api(`/api/billing/metrics/${created.body.id}`, {
    method: 'PUT',
    body: { name: 'Calls', aggregation: 'max' },
  });
  t.is(renamed.status, 200, renamed.text);
  t.like(renamed.body, { name: 'Calls', aggregation: 'max', field: 'units' });
  const deleted = await api(`/api/billing/metrics/${created.body.id}`, { method: 'DELETE' });
  t.is(deleted.status, 204);
  t.is((await api(`/api/billing/metrics/${created.body.id}`)).status, 404);
});

test.serial('U-1: field required but for count, refused for count; a bad code refused; nothing stored', async (t) => {
  const before = await count('billable_metrics');
  const cases: [Record<string, unknown>, string][] = [
    [{ aggregation: 'count', field: 'x' }, 'field'],
    [{ aggregation: 'sum' }, 'field'],
    [{ aggregation: 'unique_count' }, 'field'],
    [{ code: 'Bad-Code' }, 'code'],
    [{ code: '1abc' }, 'code'],
    [{ aggregation: 'median', field: 'x' }, 'aggregation'],
  ];
  for (const [body, path] of cases) {
    const res = await api('/api/billing/metrics', { body: { code: code(), name: 'X', aggregation: 'count', ...body } });
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.details[0].path, path, JSON.stringify(body));
  }
  t.is(await count('billable_metrics'), before);
});

test('U-2: a duplicate code is 409 metric_code_taken', async (t) => {
  const m = await metric();
  const res = await api('/api/billing/metrics', { body: { code: m.code, name: 'Again', aggregation: 'count' } });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'metric_code_taken');
});

test('U-2: a metric a charge uses keeps its aggregation and field and cannot be deleted', async (t) => {
  const m = await metric({ aggregation: 'sum', field: 'gb' });
  await planHttp(api, {
    pricingModel: 'usage',
    basePrice: '0',
    charges: [{ metricId: m.id, model: 'per_unit', unitPrice: '0.5' }],
  });
  const del = await api(`/api/billing/metrics/${m.id}`, { method: 'DELETE' });
  t.is(del.status, 409);
  t.is(del.body.error.code, 'metric_in_use');
  const change = await api(`/api/billing/metrics/${m.id}`, { method: 'PUT', body: { aggregation: 'max' } });
  t.is(change.status, 409);
  t.is(change.body.error.code, 'metric_in_use');
  const field = await api(`/api/billing/metrics/${m.id}`, { method: 'PUT', body: { field: 'tb' } });
  t.is(field.body.error?.code, 'metric_in_use');
  const rename = await api(`/api/billing/metrics/${m.id}`, { method: 'PUT', body: { name: 'Storage' } });
  t.is(rename.status, 200);
  t.like((await api(`/api/billing/metrics/${m.id}`)).body, { name: 'Storage', aggregation: 'sum', field: 'gb' });
});

test('U-3: plans with charges: usage and hybrid answer their charges with ids and metric codes', async (t) => {
  const calls = await metric();
  const gb = await metric({ aggregation: 'max', field: 'gb' });
  const plan = await planHttp(api, {
    pricingModel: 'hybrid',
    basePrice: '10.00',
    charges: [
      { metricId: calls.id, model: 'package', packageSize: 1000, packagePrice: '2.50', freeUnits: '500' },
      {
        metricId: gb.id,
        model: 'graduated',
        tiers: [
          { upTo: '10', unitPrice: '0' },
          { upTo: null, unitPrice: '0.000000000001', flatFee: '1.00' },
        ],
      },
    ],
  });
  const read = (await api(`/api/billing/plans/${plan.id}`)).body;
  t.is(read.pricingModel, 'hybrid');
  t.is(read.charges.length, 2);
  t.like(read.charges[0], { metricId: calls.id, metricCode: calls.code, model: 'package', packageSize: 1000 });
  t.like(read.charges[1], { metricCode: gb.code, model: 'graduated' });
  t.deepEqual(read.charges[1].tiers, [
    { upTo: '10', unitPrice: '0', flatFee: null },
    { upTo: null, unitPrice: '0.000000000001', flatFee: '1.00' },
  ]);
  t.truthy(read.charges[0].id);
  const listed = await api(`/api/billing/plans?productId=${plan.productId}`);
  t.is(listed.body[0].charges.length, 2);
});

test.serial('U-3/U-4: refusals name the field and store nothing', async (t) => {
  const m = await metric();
  const product = await productHttp(api);
  const base = { productId: product.id, name: 'P', billingCycle: 'monthly', currency: 'USD' };
  const perUnit = { metricId: m.id, model: 'per_unit', unitPrice: '1' };
  const graduated = (bounds: (string | null)[]) => ({
    pricingModel: 'usage',
    basePrice: '0',
    charges: [{ metricId: m.id, model: 'graduated', tiers: bounds.map((upTo) => ({ upTo, unitPrice: '1' })) }],
  });
  const cases: [Record<string, unknown>, string][] = [
    [{ pricingModel: 'flat', basePrice: '1', charges: [perUnit] }, 'charges'],
    [{ pricingModel: 'usage', basePrice: '0' }, 'charges'],
    [{ pricingModel: 'hybrid', basePrice: '5', charges: [] }, 'charges'],
    [{ pricingModel: 'usage', basePrice: '5', charges: [perUnit] }, 'basePrice'],
    [{ pricingModel: 'usage', basePrice: '0', charges: [perUnit, perUnit] }, 'charges.1.metricId'],
    [
      {
        pricingModel: 'usage',
        basePrice: '0',
        charges: [{ ...perUnit, metricId: '00000000-0000-4000-8000-000000000000' }],
      },
      'charges.0.metricId',
    ],
    [
      { pricingModel: 'usage', basePrice: '0', charges: [{ metricId: m.id, model: 'per_unit' }] },
      'charges.0.unitPrice',
    ],
    [{ pricingModel: 'usage', basePrice: '0', charges: [{ ...perUnit, packageSize: 3 }] }, 'charges.0.packageSize'],
    [
      { pricingModel: 'usage', basePrice: '0', charges: [{ ...perUnit, unitPrice: '0.0000000000001' }] },
      'charges.0.unitPrice',
    ],
    [
      { pricingModel: 'usage', basePrice: '0', charges: [{ metricId: m.id, model: 'package', packagePrice: '1' }] },
      'charges.0.packageSize',
    ],
    [
      {
        pricingModel: 'usage',
        basePrice: '0',
        charges: [{ metricId: m.id, model: 'package', packageSize: 10, packagePrice: '1.001' }],
      },
      'charges.0.packagePrice',
    ],
    [
      {
        pricingModel: 'usage',
        basePrice: '0',
        charges: [{ metricId: m.id, model: 'volume', tiers: [{ upTo: '10', unitPrice: '1' }] }],
      },
      'charges.0.tiers',
    ],
    [graduated(['10', '5', null]), 'charges.0.tiers'],
    [graduated([null, null]), 'charges.0.tiers'],
    [graduated(['0', null]), 'charges.0.tiers'],
  ];
  const plans = await count('plans');
  const charges = await count('plan_charges');
  for (const [body, path] of cases) {
    const res = await api('/api/billing/plans', { body: { ...base, ...body } });
    t.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    t.is(res.body.error?.details?.[0]?.path, path, JSON.stringify(body));
  }
  t.is(await count('plans'), plans);
  t.is(await count('plan_charges'), charges);
});
