/**
 * A customer's time (TC-2): a customer on a test clock lives at the clock's `frozenTime`, every other one at the wall
 * clock. Creation paths (subscriptions, invoices, licenses, usage events) ask here for the "now" of the customer they
 * write for, so a clock customer's records are dated by its clock. The clock rows belong to src/test-clocks/; this is
 * the one read of them below it (customers carry their clock).
 */
import { customerClockIds } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';

/** The clock times of these customers; customers on no clock are absent. */
export async function customerClockTimes(db: Db, customerIds: string[]): Promise<Map<string, Date>> {
  const clocks = await customerClockIds(db, customerIds);
  if (clocks.size === 0) return new Map();
  const rows: { id: string; frozen_time: Date }[] = await db('test_clocks')
    .whereIn('id', [...new Set(clocks.values())])
    .select('id', 'frozen_time');
  const times = new Map(rows.map((r) => [r.id, r.frozen_time]));
  return new Map([...clocks].flatMap(([customer, clock]) => (times.has(clock) ? [[customer, times.get(clock)!]] : [])));
}

/**
 * The "now" a write for this customer runs at (TC-2): the caller's `given` time when it names one (the sweep's
 * `asOf`, the demo's story), else the customer's clock time, else the wall clock. Every admin and portal write path
 * (subscription updates and plan changes, payments, invoice status, store credit, credit notes) resolves it here.
 */
export async function nowForCustomer(db: Db, customerId: string, given?: Date): Promise<Date> {
  return given ?? (await customerClockTimes(db, [customerId])).get(customerId) ?? new Date();
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
