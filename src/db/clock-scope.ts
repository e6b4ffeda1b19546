/**
 * Which customers a lifecycle step works on (issue 39, TC-4): the daily sweep's are those on no test clock; a test
 * clock's advance works on that clock's customers only. Every step's claim adds `customerScopeSql` on the column that
 * names its row's customer, so the two never touch each other's rows, with one definition of "on a clock".
 */
import type { Db } from './knex.ts';

export type CustomerScope =
  | { kind: 'real' }
  /** `customerIds`: the clock's customers, fixed while it advances (none may join then, TC-2). */
  | { kind: 'testClock'; testClockId: string; customerIds: string[] };

/** The daily sweep's scope: customers on no test clock. */
export const REAL_CUSTOMERS: CustomerScope = { kind: 'real' };

/** A test clock's customers: `customerIds` are all of them (read once when its advance starts). */
export const clockCustomers = (testClockId: string, customerIds: string[]): CustomerScope => ({
  kind: 'testClock',
  testClockId,
  customerIds,
});

/**
 * A condition (SQL and its bindings) that holds when the customer `customerColumn` names is in `scope`.
 *
 * The daily sweep's: a scalar subquery on the customer's key, so each candidate row costs one primary-key lookup
 * whatever the planner believes of the customers on a clock (as a join, a clock's customers created moments before,
 * not yet analysed, were taken for one row and every candidate row was compared with all of them: bench/test-clocks.ts,
 * 0.6 s per 1,000 invoices).
 *
 * A clock's: its customers' keys bound as one array. The statement is planned with the bound value, so the array is a
 * constant and each candidate is tested against a hash of it (PostgreSQL 14+), and the planner knows how many keys it
 * holds. Testing every real candidate by a key lookup, at every moment of an advance (the real customers' issued
 * invoices past due by the clock's moments are candidates of the overdue and auto-charge claims), cost most of the
 * advance's time; an array read by a subquery is searched linearly per row, which was worse (bench/test-clocks.ts,
 * figures in docs/decisions.md, issue 39).
 */
export function customerScopeSql(
  scope: CustomerScope,
  customerColumn: string,
): { sql: string; bindings: (string | string[])[] } {
  if (scope.kind === 'real')
    return {
      sql: `(select scope_c.test_clock_id from customers scope_c where scope_c.id = ${customerColumn}) is null`,
      bindings: [],
    };
  return { sql: `${customerColumn} = any(?::uuid[])`, bindings: [scope.customerIds] };
}

/**
 * Each customer's test clock as last read, per process: a customer's clock is set when it is created and never changes
 * (TC-2), and ids are never reused, so the answer never goes stale. Recording events and queueing emails ask for every
 * write (TC-5), usually for customers that invoice issuing asked for just before. Bounded: cleared when full.
 */
const clockOfCustomer = new Map<string, string | null>();
const CLOCK_CACHE_MAX = 100_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The test clocks of these customers (ids that are not customers' are ignored); customers on no clock are absent. */
export async function customerClockIds(db: Db, customerIds: readonly string[]): Promise<Map<string, string>> {
  const asked = [...new Set(customerIds)].filter((id) => UUID.test(id) && !clockOfCustomer.has(id));
  if (asked.length > 0) {
    const rows: { id: string; test_clock_id: string | null }[] = await db('customers')
      .whereRaw('id = any(?::uuid[])', [asked])
      .select('id', 'test_clock_id');
    if (clockOfCustomer.size + rows.length > CLOCK_CACHE_MAX) clockOfCustomer.clear();
    for (const r of rows) clockOfCustomer.set(r.id, r.test_clock_id);
  }
  const clocks = new Map<string, string>();
  for (const id of customerIds) {
    const clock = clockOfCustomer.get(id);
    if (clock) clocks.set(id, clock);
  }
  return clocks;
}
