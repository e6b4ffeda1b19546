/**
 * Which customers a lifecycle step works on (issue 39, TC-4): the daily sweep's are those on no test clock; a test
 * clock's advance works on that clock's customers only. Every step's claim adds `customerScopeSql` on the column that
 * names its row's customer, so the two never touch each other's rows, with one definition of "on a clock".
 */
export type CustomerScope = { kind: 'real' } | { kind: 'testClock'; testClockId: string };

/** The daily sweep's scope: customers on no test clock. */
export const REAL_CUSTOMERS: CustomerScope = { kind: 'real' };

/** A test clock's customers. */
export const clockCustomers = (testClockId: string): CustomerScope => ({ kind: 'testClock', testClockId });

/**
 * A condition (SQL and its bindings) that holds when the customer `customerColumn` names is in `scope`. Written as a
 * scalar subquery on the customer's key, so each row costs one primary-key lookup whatever the planner believes of
 * the customers on a clock: as a join, a clock's customers created moments before (not yet analysed) were taken for
 * one row and every candidate row was compared with all of them (bench/test-clocks.ts: 0.6 s per 1,000 invoices).
 */
export function customerScopeSql(scope: CustomerScope, customerColumn: string): { sql: string; bindings: string[] } {
  const clockOf = `(select scope_c.test_clock_id from customers scope_c where scope_c.id = ${customerColumn})`;
  if (scope.kind === 'real') return { sql: `${clockOf} is null`, bindings: [] };
  return { sql: `${clockOf} = ?::uuid`, bindings: [scope.testClockId] };
}
