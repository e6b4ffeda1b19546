/**
 * The demo's book dated as it happened (issue 34). The services take the story's date as their clock for what
 * they decide (periods, due dates, payments' days), but many rows are stamped by the database itself: each
 * event's `created_at`, a customer's, an `updated_at`. Left alone, those all read the seeding
 * moment, so the timelines and the overview's MRR chart (built from the event log) are flat. After each step of
 * the story, what the step stamped with the real clock is moved to the step's date, keeping the stamps' order
 * and spacing (`created_at + (date - start of the step)`). This is the demo's only SQL of its own: it rewrites
 * history, which no service may do, and only where the demo may run (LIFECYCLE_ALLOW_AS_OF, never production).
 */
import type { Db } from '../db/knex.ts';

/**
 * Tables whose stamps are not the book's: sessions, keys and windows that expire by the real clock; and the audit
 * log, which is append-only (a trigger refuses any change): it says truly when each row was recorded.
 */
const NOT_THE_BOOK = new Set([
  'audit_log',
  'sessions',
  'idempotency_keys',
  'login_failures',
  'rate_limit_windows',
  'users',
  'settings',
  'knex_migrations',
  'knex_migrations_lock',
]);

interface StampedTable {
  table: string;
  columns: string[];
}

/** The tables of the book with their database-stamped columns (`created_at`, `updated_at`), read once. */
export async function stampedTables(db: Db): Promise<StampedTable[]> {
  const { rows } = (await db.raw(
    `select table_name, array_agg(column_name::text order by column_name) as columns
       from information_schema.columns
      where table_schema = current_schema() and column_name in ('created_at', 'updated_at')
        and data_type like 'timestamp%'
      group by table_name order by table_name`,
  )) as { rows: { table_name: string; columns: string[] }[] };
  return rows.filter((r) => !NOT_THE_BOOK.has(r.table_name)).map((r) => ({ table: r.table_name, columns: r.columns }));
}

/** The database's clock now: a step's stamps are compared with it, not with this process's clock. */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = (await db.raw('select clock_timestamp() as now')) as { rows: { now: Date }[] };
  return rows[0]!.now;
}

/** Moves every stamp written since `since` (the database's clock) to the story's date `at`. */
export async function backdateSince(db: Db, tables: StampedTable[], since: Date, at: Date): Promise<void> {
  const shiftMs = at.getTime() - since.getTime();
  if (shiftMs >= 0) return;
  for (const { table, columns } of tables) {
    const sets = columns.map((c) => `"${c}" = case when "${c}" >= ? then "${c}" + ?::interval else "${c}" end`);
    const where = columns.map((c) => `"${c}" >= ?`).join(' or ');
    const shift = `${shiftMs} milliseconds`;
    await db.raw(`update "${table}" set ${sets.join(', ')} where ${where}`, [
      ...columns.flatMap(() => [since, shift]),
      ...columns.map(() => since),
    ]);
  }
}

/**
 * The customers' sign-ups, dated when the story says: they are created before the story runs (their ids plan
 * it), so their rows are moved back to `at` each (their audit rows keep the real time, as every audit row).
 */
export async function backdateSignUps(db: Db, signUps: { customerId: string; at: Date }[]): Promise<void> {
  if (signUps.length === 0) return;
  const json = JSON.stringify(signUps.map((s) => ({ id: s.customerId, at: s.at.toISOString() })));
  await db.raw(
    `update customers c set created_at = s.at::timestamptz, updated_at = s.at::timestamptz
       from jsonb_to_recordset(?::jsonb) as s(id text, at text) where c.id = s.id::uuid`,
    [json],
  );
}
