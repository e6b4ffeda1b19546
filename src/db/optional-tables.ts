import type { Db } from '../db/knex.ts';

/**
 * Which of the `table.column` pairs exist in the current schema.
 *
 * Products and customers are linked to tables that later migrations add (plans, subscriptions,
 * licenses, invoices, payments). Until a table exists, SQL naming it fails at plan time, so the
 * queries that depend on those tables ask the catalog first and leave out the parts whose table
 * or column is absent. Once the migrations land the same code sees the tables and starts using
 * them; the catalog lookup (to_regclass + pg_attribute) costs one cheap query. When every linked
 * table exists for good, the callers can drop this check and name the tables directly.
 */
export async function existingColumns(db: Db, wanted: readonly string[]): Promise<Set<string>> {
  const tables = wanted.map((w) => w.split('.')[0]!);
  const columns = wanted.map((w) => w.split('.')[1]!);
  const result = await db.raw<{ rows: { wanted: string }[] }>(
    `select w.tbl || '.' || w.col as wanted
       from unnest(?::text[], ?::text[]) as w(tbl, col)
      where exists (
        select 1 from pg_attribute a
         where a.attrelid = to_regclass(w.tbl) and a.attname = w.col and a.attnum > 0 and not a.attisdropped
      )`,
    [tables, columns],
  );
  return new Set(result.rows.map((r) => r.wanted));
}

/** True when every one of the `table.column` pairs is in `present`. */
export const hasAll = (present: Set<string>, ...needed: string[]) => needed.every((n) => present.has(n));
