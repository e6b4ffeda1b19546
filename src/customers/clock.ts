/**
 * A customer's time (TC-2): a customer on a test clock lives at the clock's `frozenTime`, every other one at the wall
 * clock. Creation paths (subscriptions, invoices, licenses, usage events) ask here for the "now" of the customer they
 * write for, so a clock customer's records are dated by its clock. The clock rows belong to src/test-clocks/; this is
 * the one read of them below it (customers carry their clock).
 */
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';

/**
 * Customers known to be on no test clock, per process: a customer's clock is set when it is created and never
 * changes (TC-2), so invoice issuing and usage ingestion, which ask for every write, read each customer once.
 * Bounded: cleared when full.
 */
const onNoClock = new Set<string>();
const ON_NO_CLOCK_MAX = 100_000;

/** The clock times of these customers; customers on no clock are absent. */
export async function customerClockTimes(db: Db, customerIds: string[]): Promise<Map<string, Date>> {
  const asked = [...new Set(customerIds)].filter((id) => !onNoClock.has(id));
  if (asked.length === 0) return new Map();
  const rows: { id: string; test_clock_id: string | null; frozen_time: Date | null }[] = await db('customers as c')
    .leftJoin('test_clocks as t', 't.id', 'c.test_clock_id')
    .whereIn('c.id', asked)
    .select('c.id', 'c.test_clock_id', 't.frozen_time');
  if (onNoClock.size + rows.length > ON_NO_CLOCK_MAX) onNoClock.clear();
  for (const r of rows) if (r.test_clock_id === null) onNoClock.add(r.id);
  return new Map(rows.flatMap((r) => (r.frozen_time ? [[r.id, r.frozen_time] as const] : [])));
}

/** The customer's "now": its clock's time when it is on one, else `wall` (the caller's wall-clock now). */
export async function customerNow(db: Db, customerId: string, wall: Date): Promise<Date> {
  return (await customerClockTimes(db, [customerId])).get(customerId) ?? wall;
}

/**
 * The "now" a write for this customer runs at (TC-2): the caller's `given` time when it names one (the sweep's
 * `asOf`, the demo's story), else the customer's clock time, else the wall clock. Every admin and portal write path
 * (subscription updates and plan changes, payments, invoice status, store credit, credit notes) resolves it here.
 */
export function nowForCustomer(db: Db, customerId: string, given?: Date): Promise<Date> {
  return given ? Promise.resolve(given) : customerNow(db, customerId, new Date());
}

/** TC-2: a new customer's testClockId names a clock that exists and is not in the middle of an advance. */
export async function requireJoinableTestClock(db: Db, testClockId: string): Promise<void> {
  const clock: { status: string } | undefined = await db('test_clocks').where({ id: testClockId }).first('status');
  if (!clock)
    throw new AppError('test_clock_not_found', `Test clock ${testClockId} does not exist`, {
      details: [{ path: 'testClockId', message: 'no such test clock' }],
    });
  if (clock.status === 'advancing')
    throw new AppError(
      'clock_not_advanceable',
      `Test clock ${testClockId} is advancing: add customers once it is ready`,
      {
        details: [{ path: 'testClockId', message: 'is advancing' }],
      },
    );
}
