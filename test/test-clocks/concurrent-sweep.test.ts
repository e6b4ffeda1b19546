/**
 * Issue 39, TC-4 (must show: "the real sweep run meanwhile touches none of them"): a test clock's advance and the real
 * (unscoped) daily sweep run at the same time. The real sweep runs as of a date far beyond every period of the clock's
 * customers and is held between its steps until the advance has gone on by a moment, so each runs while the other
 * is mid-way. Afterwards the clock's customers carry only what the advance made, dated by the clock, and the real
 * customers only what the real sweep made, dated by its `asOf`: nothing twice, nothing crossed.
 */
import test from 'ava';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import type { TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import {
  api,
  clockCustomer,
  createClock,
  eventsOfCustomer,
  subscribe,
  waitForClock,
  startClockApp,
} from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  ({ app, cookie } = await startClockApp());
});
test.after.always(async () => app?.close());

const CLOCK_START = '2026-01-01T00:00:00.000Z';
const CLOCK_TARGET = '2027-07-01T00:00:00.000Z';
const REAL_AS_OF = new Date('2030-01-01T00:00:00.000Z');

test('a real sweep during an advance touches none of the clock customers, the advance no real one', async (t) => {
  t.timeout(180_000);
  const plan = await makePlan(app.db, '15.00', 'monthly');
  const clock = await createClock(app, cookie, CLOCK_START);
  const clockCustomers = [];
  for (let i = 0; i < 4; i++) {
    const customer = await clockCustomer(app, cookie, clock.id, 'pm_card_visa');
    await subscribe(app, cookie, customer.id, plan);
    clockCustomers.push(customer.id as string);
  }
  const realCustomers = [];
  for (let i = 0; i < 3; i++) {
    const customer = await clockCustomer(app, cookie, null);
    await subscribe(app, cookie, customer.id, plan);
    realCustomers.push(customer.id as string);
  }
  const realCreatedBy = new Date();

  const clockRow = () => app.db('test_clocks').where({ id: clock.id }).first();
  const res = await api(app, cookie, `/api/billing/test-clocks/${clock.id}/advance`, {
    body: { frozenTime: CLOCK_TARGET },
  });
  t.is(res.status, 202);
  // The advance has committed its first moment and is still going.
  const started = await waitFor(clockRow, (c) => c.advance_cursor !== null || c.status !== 'advancing', 60_000);
  t.is(started.status, 'advancing', 'the advance is mid-way when the real sweep starts');

  // The real sweep, held after its first step until the advance has moved on by at least one moment.
  let overlapped = false;
  let held = false;
  const summary = await runLifecycleSweep(app.deps, REAL_AS_OF, {
    heartbeat: async () => {
      if (held) return;
      held = true;
      const before = await clockRow();
      const moved = await waitFor(
        clockRow,
        (c) => c.status !== 'advancing' || c.advance_cursor?.getTime() !== before.advance_cursor?.getTime(),
        60_000,
      );
      // Advancing when held and still advancing one moment later: the two ran at once.
      overlapped = before.status === 'advancing' && moved.status === 'advancing';
    },
  });
  t.true(overlapped, 'the advance went on while the real sweep was mid-way');
  t.is(summary.errors, 0);
  const done = await waitForClock(app, cookie, clock.id, 120_000);
  t.like(done, { status: 'ready', frozenTime: CLOCK_TARGET });

  // The clock's customers: what the advance made, month by month up to the clock's time, nothing of the real sweep.
  for (const id of clockCustomers) {
    const invoices = await app.db('invoices').where({ customer_id: id }).orderBy('period_start');
    const starts = invoices.map((i) => i.period_start.toISOString().slice(0, 7));
    t.is(invoices.length, 19, 'the first period and 18 renewals, each once');
    t.is(new Set(starts).size, invoices.length, 'no period invoiced twice');
    t.true(
      invoices.every((i) => i.invoice_number.startsWith('TST-') && i.issued_at.toISOString() <= CLOCK_TARGET),
      'numbered and dated by the clock',
    );
    const sub = await app.db('subscriptions').where({ customer_id: id }).first();
    t.is(sub.current_period_end.toISOString(), '2027-08-01T00:00:00.000Z', 'not renewed by the real sweep');
    t.true((await eventsOfCustomer(app.db, id)).every((e) => e.data.testClock === clock.id));
  }

  // The real customers: renewed by the real sweep to its asOf, nothing dated by the clock's moments.
  for (const id of realCustomers) {
    const invoices = await app.db('invoices').where({ customer_id: id }).orderBy('period_start');
    t.true(invoices.length > 30, 'renewed by the real sweep up to 2030');
    t.is(new Set(invoices.map((i) => i.period_start.getTime())).size, invoices.length, 'no period invoiced twice');
    t.true(
      invoices.every(
        (i) =>
          i.invoice_number.startsWith('INV-') &&
          (i.issued_at.getTime() <= realCreatedBy.getTime() || i.issued_at.getTime() === REAL_AS_OF.getTime()),
      ),
      'issued at creation or by the real sweep, never at a moment of the clock',
    );
    const sub = await app.db('subscriptions').where({ customer_id: id }).first();
    t.true(sub.current_period_end.getTime() > REAL_AS_OF.getTime());
    t.true((await eventsOfCustomer(app.db, id)).every((e) => e.data.testClock === undefined));
  }
});
