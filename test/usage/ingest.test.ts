import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { updateSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { apiKeyOf, DAY, makeMetric, makeUsagePlan, subscribe, txId } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

/** A customer on a plan charging one count metric per unit, with its API key. */
async function world(aggregation: 'count' | 'sum' | 'max' | 'unique_count' | 'latest' = 'count') {
  const metric = await makeMetric(app.db, aggregation);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.01' }]);
  const { customer, sub } = await subscribe(app.db, plan.id);
  const key = await apiKeyOf(app, cookie, customer.id);
  const send = (events: unknown[]) => request(app.baseUrl, '/api/v1/usage/events', { bearer: key, body: { events } });
  const usage = async () => (await request(app.baseUrl, `/api/v1/subscriptions/${sub.id}/usage`, { bearer: key })).body;
  return { metric, plan, customer, sub, key, send, usage };
}

const stored = async (customerId: string) =>
  Number((await app.db('usage_events').where({ customer_id: customerId }).count('* as n'))[0]!.n);

test('U-5/U-6/U-7: events accepted in order and read back at once (read your writes)', async (t) => {
  const w = await world();
  const ids = [txId(), txId(), txId()];
  const res = await w.send(ids.map((transactionId) => ({ transactionId, metric: w.metric.code })));
  t.is(res.status, 200, res.text);
  t.deepEqual(
    res.body.results,
    ids.map((transactionId) => ({ transactionId, status: 'accepted' })),
  );
  const usage = await w.usage();
  t.is(usage.subscriptionId, w.sub.id);
  t.is(usage.currency, 'USD');
  t.is(usage.charges[0].quantity, '3');
  t.is(usage.charges[0].amount, '0.03');
  t.is(usage.amount, '0.03');
  t.deepEqual(usage.charges[0].tiers, []);
  t.is(usage.periodStart, w.sub.current_period_start.toISOString());
});

test('U-6: each rejection code, in the documented order, and one bad event never fails the others', async (t) => {
  const w = await world('sum');
  const other = await world('sum');
  const now = Date.now();
  const events = [
    { transactionId: 'a', metric: 'no_such_metric', properties: { value: 1 } },
    { transactionId: 'b', metric: w.metric.code, timestamp: new Date(now - 36 * DAY).toISOString() },
    { transactionId: 'c', metric: w.metric.code, timestamp: new Date(now + 10 * 60_000).toISOString() },
    { transactionId: 'd', metric: w.metric.code, properties: { value: 'ten' } },
    { transactionId: 'e', metric: w.metric.code, properties: {} },
    { transactionId: 'f', metric: w.metric.code, subscriptionId: other.sub.id, properties: { value: 1 } },
    { transactionId: 'g', metric: other.metric.code, properties: { value: 1 } },
    { transactionId: 'h', metric: w.metric.code, properties: { value: '2.5' } },
    { transactionId: 'i', metric: w.metric.code, properties: { value: [1] } },
  ];
  const res = await w.send(events);
  t.is(res.status, 200, res.text);
  t.deepEqual(
    res.body.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
    [
      'unknown_metric',
      'timestamp_out_of_window',
      'timestamp_out_of_window',
      'invalid_property',
      'invalid_property',
      'subscription_not_found',
      'no_matching_charge',
      'accepted',
      'invalid_property',
    ],
  );
  t.truthy(res.body.results[0].error.message);
  t.is((await w.usage()).charges[0].quantity, '2.5');
  t.is(await stored(w.customer.id), 1);
});

test('U-6: the same transactionId and content is a duplicate; with other content it is refused', async (t) => {
  const w = await world('sum');
  const id = txId();
  const at = new Date(Date.now() - 60_000).toISOString();
  const first = await w.send([{ transactionId: id, metric: w.metric.code, timestamp: at, properties: { value: 4 } }]);
  t.is(first.body.results[0].status, 'accepted');
  const again = await w.send([{ transactionId: id, metric: w.metric.code, timestamp: at, properties: { value: 4 } }]);
  t.deepEqual(again.body.results, [{ transactionId: id, status: 'duplicate' }]);
  for (const changed of [
    { properties: { value: 5 } },
    { timestamp: new Date(Date.now() - 120_000).toISOString(), properties: { value: 4 } },
    { subscriptionId: w.sub.id, properties: { value: 4 } },
  ]) {
    const reuse = await w.send([{ transactionId: id, metric: w.metric.code, timestamp: at, ...changed }]);
    t.is(reuse.body.results[0].error?.code, 'transaction_id_reused', JSON.stringify(changed));
  }
  t.is((await w.usage()).charges[0].quantity, '4');
  t.is(await stored(w.customer.id), 1);
  // In one batch: the second copy is a duplicate, a conflicting third refused.
  const id2 = txId();
  const batch = await w.send([
    { transactionId: id2, metric: w.metric.code, properties: { value: 1 }, timestamp: at },
    { transactionId: id2, metric: w.metric.code, properties: { value: 1 }, timestamp: at },
    { transactionId: id2, metric: w.metric.code, properties: { value: 9 }, timestamp: at },
  ]);
  t.deepEqual(
    batch.body.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
    ['accepted', 'duplicate', 'transaction_id_reused'],
  );
  t.is((await w.usage()).charges[0].quantity, '5');
});

test('U-6: the same batch sent 10 times concurrently is counted once', async (t) => {
  const w = await world();
  const events = Array.from({ length: 200 }, () => ({ transactionId: txId(), metric: w.metric.code }));
  const answers = await Promise.all(Array.from({ length: 10 }, () => w.send(events)));
  for (const a of answers) t.is(a.status, 200, a.text);
  for (let i = 0; i < events.length; i++) {
    const statuses = answers.map((a) => a.body.results[i].status).sort();
    t.deepEqual(statuses, ['accepted', ...Array(9).fill('duplicate')]);
  }
  t.is((await w.usage()).charges[0].quantity, '200');
  t.is(await stored(w.customer.id), 200);
});

test('U-6: 1,001 events, or a body that is not such an object, are refused whole and store nothing', async (t) => {
  const w = await world();
  const many = Array.from({ length: 1001 }, () => ({ transactionId: txId(), metric: w.metric.code }));
  const res = await w.send(many);
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  for (const body of [{}, { events: [] }, { events: 'x' }, { events: [{ metric: w.metric.code }] }, [1]]) {
    const bad = await request(app.baseUrl, '/api/v1/usage/events', { bearer: w.key, body });
    t.is(bad.status, 400, JSON.stringify(body));
  }
  const exactly = await w.send(many.slice(0, 1000));
  t.is(exactly.status, 200);
  t.is(await stored(w.customer.id), 1000);
});

test('U-1: sum, max, unique_count and latest are exact', async (t) => {
  const base = Date.now() - 3_600_000;
  const send = async (aggregation: 'sum' | 'max' | 'unique_count' | 'latest', values: unknown[], times?: number[]) => {
    const w = await world(aggregation);
    const res = await w.send(
      values.map((value, i) => ({
        transactionId: txId(),
        metric: w.metric.code,
        timestamp: new Date(base + (times?.[i] ?? i) * 1000).toISOString(),
        properties: { value },
      })),
    );
    t.true(
      res.body.results.every((r: { status: string }) => r.status === 'accepted'),
      res.text,
    );
    return w;
  };
  t.is((await (await send('sum', ['0.1', 0.2, '3'])).usage()).charges[0].quantity, '3.3');
  t.is((await (await send('max', [3, '7.25', 5])).usage()).charges[0].quantity, '7.25');
  const unique = await send('unique_count', ['a', 'b', 'a', 1, '1', 'c']);
  t.is((await unique.usage()).charges[0].quantity, '4');
  await unique.send([{ transactionId: txId(), metric: unique.metric.code, properties: { value: 'b' } }]);
  t.is((await unique.usage()).charges[0].quantity, '4');
  // latest: the latest timestamp wins, whatever the order sent; a tie goes to the one accepted last.
  const latest = await send('latest', [10, 30, 20], [5, 9, 1]);
  t.is((await latest.usage()).charges[0].quantity, '30');
  await latest.send([
    {
      transactionId: txId(),
      metric: latest.metric.code,
      timestamp: new Date(base + 9000).toISOString(),
      properties: { value: 44 },
    },
  ]);
  t.is((await latest.usage()).charges[0].quantity, '44');
  await latest.send([
    {
      transactionId: txId(),
      metric: latest.metric.code,
      timestamp: new Date(base + 2000).toISOString(),
      properties: { value: 1 },
    },
  ]);
  t.is((await latest.usage()).charges[0].quantity, '44');
});

test('U-8: a paused subscription accepts nothing; a trial records usage and prices it at 0', async (t) => {
  const w = await world();
  await updateSubscription(app.db, w.sub.id, { status: 'paused' }, SYSTEM_ACTOR);
  const paused = await w.send([{ transactionId: txId(), metric: w.metric.code }]);
  t.is(paused.body.results[0].error?.code, 'no_matching_charge');

  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '1' }]);
  const { customer, sub } = await subscribe(app.db, plan.id, new Date(Date.now() - DAY), 14);
  t.is(sub.status, 'trialing');
  const res = await request(app.baseUrl, '/api/billing/usage/events', {
    cookie,
    body: { events: [{ customerId: customer.id, transactionId: txId(), metric: metric.code }] },
  });
  t.is(res.body.results[0].status, 'accepted', res.text);
  const usage = (await request(app.baseUrl, `/api/billing/subscriptions/${sub.id}/usage`, { cookie })).body;
  t.is(usage.charges[0].quantity, '1');
  t.is(usage.amount, '0.00');
});

test("U-9: another customer's subscription is 404 over v1; a periodStart that is no period is 400", async (t) => {
  const a = await world();
  const b = await world();
  const res = await request(app.baseUrl, `/api/v1/subscriptions/${b.sub.id}/usage`, { bearer: a.key });
  t.is(res.status, 404);
  const admin = await request(app.baseUrl, `/api/billing/subscriptions/${b.sub.id}/usage?periodStart=2020-01-01`, {
    cookie,
  });
  t.is(admin.status, 400);
  t.is(admin.body.error.details[0].path, 'periodStart');
  t.is((await request(app.baseUrl, `/api/billing/subscriptions/${b.sub.id}/usage`)).status, 401);
});

test.serial("U-5: the admin route takes several customers' events; one without customerId is a 400", async (t) => {
  const a = await world();
  const b = await world();
  const res = await request(app.baseUrl, '/api/billing/usage/events', {
    cookie,
    body: {
      events: [
        { customerId: a.customer.id, transactionId: 'same', metric: a.metric.code },
        { customerId: b.customer.id, transactionId: 'same', metric: b.metric.code },
      ],
    },
  });
  t.deepEqual(
    res.body.results.map((r: { status: string }) => r.status),
    ['accepted', 'accepted'],
  );
  // The admin's batch is an admin action: one audit row with its counts (C-11); v1 batches leave none.
  const audits = await app.db('audit_log').where({ action: 'usage.record' });
  t.is(audits.length, 1);
  t.like(audits[0].after, { events: 2, accepted: 2 });
  const missing = await request(app.baseUrl, '/api/billing/usage/events', {
    cookie,
    body: { events: [{ transactionId: 'x', metric: a.metric.code }] },
  });
  t.is(missing.status, 400);
});
