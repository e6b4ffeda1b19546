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
 * A condition (SQL and its bindings) that holds when the customer `customerColumn` names is in `scope`: an index
 * lookup of the customer (customers_test_clock holds the few on a clock).
 */
export function customerScopeSql(scope: CustomerScope, customerColumn: string): { sql: string; bindings: string[] } {
  if (scope.kind === 'real')
    return {
      sql: `not exists (select 1 from customers scope_c
                         where scope_c.id = ${customerColumn} and scope_c.test_clock_id is not null)`,
      bindings: [],
    };
  return {
    sql: `exists (select 1 from customers scope_c where scope_c.id = ${customerColumn} and scope_c.test_clock_id = ?)`,
    bindings: [scope.testClockId],
  };
}
