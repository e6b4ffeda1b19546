import test from 'ava';
import { ingestEvents } from '../../src/usage-api/ingest.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DAY, makeMetric, makeUsagePlan, subscribe, txId } from './fixtures.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

/** The start of the next UTC month, and a customer whose period spans it. */
async function aroundMonthStart() {
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const metric = await makeMetric(app.db, 'count');
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.01' }]);
  const { customer, sub } = await subscribe(app.db, plan.id, new Date(monthStart.getTime() - 20 * DAY));
  const send = (at: Date, events: { transactionId: string; timestamp?: Date }[]) =>
    ingestEvents(
      app.db,
      events.map((e) => ({ ...e, customerId: customer.id, metric: metric.code })),
      { now: at },
    );
  const events = async () =>
    Number((await app.db('usage_events').where({ customer_id: customer.id }).count('* as n'))[0]!.n);
  return { monthStart, sub, send, events };
}

test('an undated event retried across a month start is a duplicate (keys looked for around the month)', async (t) => {
  const { monthStart, send, events } = await aroundMonthStart();
  const before = new Date(monthStart.getTime() - 60_000);
  const after = new Date(monthStart.getTime() + 3 * DAY);
  const id = txId('undated');
  t.deepEqual(await send(before, [{ transactionId: id }]), [{ transactionId: id, status: 'accepted' }]);
  const fresh = txId('fresh');
  t.deepEqual(await send(after, [{ transactionId: id }, { transactionId: fresh }]), [
    { transactionId: id, status: 'duplicate' },
    { transactionId: fresh, status: 'accepted' },
  ]);
  t.is(await events(), 2);
});

test('a dated event keeps its month: its retry is a duplicate, another timestamp that month is refused', async (t) => {
  const { monthStart, send, events } = await aroundMonthStart();
  const at = new Date(monthStart.getTime() + 3_600_000);
  const id = txId('dated');
  const timestamp = new Date(monthStart.getTime() + 60_000);
  t.is((await send(at, [{ transactionId: id, timestamp }]))[0]!.status, 'accepted');
  t.is((await send(at, [{ transactionId: id, timestamp }]))[0]!.status, 'duplicate');
  const other = await send(at, [{ transactionId: id, timestamp: new Date(timestamp.getTime() + 1000) }]);
  t.is(other[0]!.error?.code, 'transaction_id_reused');
  t.is(await events(), 1);
});

test('a transactionId reused with a timestamp in another month is refused and changes nothing (U-6)', async (t) => {
  const { monthStart, send, events } = await aroundMonthStart();
  const at = new Date(monthStart.getTime() + 3_600_000);
  const id = txId('months');
  const first = new Date(monthStart.getTime() - 60_000);
  t.is((await send(at, [{ transactionId: id, timestamp: first }]))[0]!.status, 'accepted');
  const reused = await send(at, [{ transactionId: id, timestamp: new Date(monthStart.getTime() + 60_000) }]);
  t.is(reused[0]!.error?.code, 'transaction_id_reused');
  // Sent first in the later month, then with a timestamp of the month before: refused too.
  const later = txId('months-back');
  t.is(
    (await send(at, [{ transactionId: later, timestamp: new Date(monthStart.getTime() + 60_000) }]))[0]!.status,
    'accepted',
  );
  const back = await send(at, [{ transactionId: later, timestamp: first }]);
  t.is(back[0]!.error?.code, 'transaction_id_reused');
  t.is((await send(at, [{ transactionId: later, timestamp: first }]))[0]!.error?.code, 'transaction_id_reused');
  t.is((await send(at, [{ transactionId: id, timestamp: first }]))[0]!.status, 'duplicate');
  t.is(await events(), 2);
});
