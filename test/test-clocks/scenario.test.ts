/**
 * Issue 39 (TC-1..TC-4): a monthly subscription with a 14-day trial on a test clock advanced 3 months receives, in
 * order, subscription.created, the trial's end, and three invoice.created each followed by its payment, dated by the
 * clock; the real sweep run before it touches none of it (run during it: concurrent-sweep.test.ts); refusals (409,
 * 400); deleting the clock removes its customers' records and leaves real invoices' numbering gapless.
 */
import test from 'ava';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import type { TestApp } from '../helpers/app.ts';
import { numberingProblems } from '../lifecycle/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { advance, api, clockCustomer, createClock, eventsOfCustomer, subscribe, startClockApp } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  ({ app, cookie } = await startClockApp());
});
test.after.always(async () => app?.close());

const day = (d: Date | string) => new Date(d).toISOString().slice(0, 10);

test.serial('a trial, 3 months of renewals on a clock; the real sweep leaves them alone; delete', async (t) => {
  const plan = await makePlan(app.db, '29.00', 'monthly');
  const clock = await createClock(app, cookie, '2026-01-01T10:00:00.000Z');
  t.like(clock, { status: 'ready', frozenTime: '2026-01-01T10:00:00.000Z', advancingTo: null });
  t.is(new Date(clock.deletesAfter).getTime() - new Date(clock.createdAt).getTime(), 30 * 86_400_000);

  const customer = await clockCustomer(app, cookie, clock.id, 'pm_card_visa');
  t.is(customer.testClockId, clock.id);
  const sub = await subscribe(app, cookie, customer.id, plan, { trialDays: 14 });
  t.like(sub, { status: 'trialing', currentPeriodStart: '2026-01-01T10:00:00.000Z' });
  t.is(sub.trialEnd, '2026-01-15T10:00:00.000Z', 'the trial ends 14 days after the clock time');

  // A real customer, due long ago: the real sweep renews it and nothing of the clock's.
  const real = await clockCustomer(app, cookie, null);
  const realSub = await subscribe(app, cookie, real.id, plan);
  await runLifecycleSweep(app.deps, new Date('2030-01-01T00:00:00.000Z'));
  t.true((await app.db('invoices').where({ customer_id: real.id })).length > 1, 'the real sweep renewed the real one');
  t.is((await app.db('invoices').where({ customer_id: customer.id })).length, 0, 'and not the clock customer');
  t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'trialing');

  const advanced = await advance(app, cookie, clock.id, '2026-04-01T10:00:00.000Z');
  t.like(advanced, { status: 'ready', frozenTime: '2026-04-01T10:00:00.000Z', advancingTo: null });

  const events = await eventsOfCustomer(app.db, customer.id);
  const lifecycle = events.filter((e) => !e.type.startsWith('payment.'));
  t.deepEqual(
    lifecycle.map((e) => e.type),
    [
      'subscription.created',
      'subscription.updated',
      'invoice.created',
      'invoice.paid',
      'invoice.created',
      'invoice.paid',
      'invoice.created',
      'invoice.paid',
    ],
  );
  t.is(lifecycle[1]!.data.status, 'active', "the trial's end");
  t.true(
    events.every((e) => e.data.testClock === clock.id),
    'every event carries the clock',
  );
  const invoices = await app.db('invoices').where({ customer_id: customer.id }).orderBy('issued_at');
  t.deepEqual(
    invoices.map((i) => [day(i.issued_at), day(i.period_start), i.status]),
    [
      ['2026-01-15', '2026-01-15', 'paid'],
      ['2026-02-15', '2026-02-15', 'paid'],
      ['2026-03-15', '2026-03-15', 'paid'],
    ],
    'invoices dated by the clock, each at its own moment, paid by the test method',
  );
  t.true(
    invoices.every((i) => /^TST-2026-\d{4}$/.test(i.invoice_number)),
    'numbered apart from real invoices',
  );
  const attempts = await app.db('charge_attempts').whereIn(
    'invoice_id',
    invoices.map((i) => i.id),
  );
  t.deepEqual(
    attempts.map((a) => a.status),
    ['succeeded', 'succeeded', 'succeeded'],
  );
  // The real customer's records did not move under the clock.
  t.is(
    (await app.db('subscriptions').where({ id: realSub.id }).first()).current_period_end.toISOString() > '2029',
    true,
  );

  // Refusals change nothing.
  const back = await api(app, cookie, `/api/billing/test-clocks/${clock.id}/advance`, {
    body: { frozenTime: '2026-03-01T00:00:00.000Z' },
  });
  t.is(back.status, 409);
  t.is(back.body.error.code, 'clock_not_advanceable');
  const far = await api(app, cookie, `/api/billing/test-clocks/${clock.id}/advance`, {
    body: { frozenTime: '2028-04-02T00:00:00.000Z' },
  });
  t.is(far.status, 400);
  t.is(far.body.error.details[0].path, 'frozenTime');
  const put = await api(app, cookie, `/api/customers/${real.id}`, { method: 'PUT', body: { testClockId: clock.id } });
  t.is(put.status, 400, 'a customer is put on a clock only when created');
  t.is((await api(app, cookie, `/api/customers/${real.id}`)).body.testClockId, null);
  t.like((await api(app, cookie, `/api/billing/test-clocks/${clock.id}`)).body, {
    status: 'ready',
    frozenTime: '2026-04-01T10:00:00.000Z',
  });

  const realInvoices = (await app.db('invoices').where({ customer_id: real.id })).length;
  const deleted = await api(app, cookie, `/api/billing/test-clocks/${clock.id}`, { method: 'DELETE' });
  t.is(deleted.status, 204);
  t.is((await api(app, cookie, `/api/billing/test-clocks/${clock.id}`)).status, 404);
  t.is((await api(app, cookie, `/api/customers/${customer.id}`)).status, 404);
  for (const table of ['subscriptions', 'invoices', 'payments', 'payment_methods', 'emails', 'dunning_cases'])
    t.is((await app.db(table).where({ customer_id: customer.id })).length, 0, `no ${table} left`);
  t.is((await eventsOfCustomer(app.db, customer.id)).length, 0, 'nor events');
  t.is((await app.db('invoices').where({ customer_id: real.id })).length, realInvoices, 'real invoices stay');
  t.deepEqual(await numberingProblems(app.db), [], 'real invoice numbers stay gapless');
});

test.serial('two advances of one clock at once: one runs, the other is 409', async (t) => {
  const clock = await createClock(app, cookie, '2026-01-01T00:00:00.000Z');
  const path = `/api/billing/test-clocks/${clock.id}/advance`;
  const answers = await Promise.all(
    ['2026-02-01', '2026-03-01'].map((frozenTime) => api(app, cookie, path, { body: { frozenTime } })),
  );
  t.deepEqual(answers.map((a) => a.status).sort(), [202, 409]);
  const refused = answers.find((a) => a.status === 409)!;
  t.is(refused.body.error.code, 'clock_not_advanceable');
  const accepted = answers.find((a) => a.status === 202)!;
  t.is(accepted.body.status, 'advancing');
  const { waitForClock } = await import('./fixtures.ts');
  const ready = await waitForClock(app, cookie, clock.id);
  t.is(ready.frozenTime, accepted.body.advancingTo);
});

test.serial('creation refused where billing.test_clocks_enabled is false; unknown clock on a customer', async (t) => {
  const off = await api(app, cookie, '/api/settings', {
    method: 'PUT',
    body: { 'billing.test_clocks_enabled': false },
  });
  t.is(off.status, 200, off.text);
  const before = (await app.db('test_clocks')).length;
  const res = await api(app, cookie, '/api/billing/test-clocks', { body: { name: 'x', frozenTime: '2026-01-01' } });
  t.is(res.status, 403);
  t.is(res.body.error.code, 'test_clocks_disabled');
  t.is((await app.db('test_clocks')).length, before);
  await api(app, cookie, '/api/settings', { method: 'PUT', body: { 'billing.test_clocks_enabled': true } });
  const unknown = await api(app, cookie, '/api/customers', {
    body: { name: 'n', email: 'unknown-clock@example.test', testClockId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' },
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'test_clock_not_found');
});
