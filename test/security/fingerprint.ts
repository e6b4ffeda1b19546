/**
 * A fingerprint of every table of the service's schema (row count and a checksum of the rows), to show
 * that a refused request changed nothing. One query, so it is cheap enough to take around each request.
 */
import type { Knex } from 'knex';

/**
 * Columns a refused request may legitimately touch: an API key's lastUsedAt is written on authentication,
 * before the request is refused for other reasons (D-14).
 */
const VOLATILE_COLUMNS = ['last_used_at'];

/**
 * Tables a refused request writes by design: a refused login records the failure that throttling counts (D-16),
 * and a public license call answered 404 (an unknown key) counts against the shared rate limit (D-16, issue 20).
 */
const WRITTEN_WHEN_REFUSED = new Set([
  'login_failures',
  'rate_limit_windows',
  'knex_migrations',
  'knex_migrations_lock',
]);

export type Fingerprint = Record<string, string>;

export async function fingerprintQuery(db: Knex): Promise<() => Promise<Fingerprint>> {
  const tables = (await db('information_schema.tables')
    .where({ table_schema: 'public', table_type: 'BASE TABLE' })
    .pluck('table_name')) as string[];
  const volatile = VOLATILE_COLUMNS.map((c) => `'${c}'`).join(' - ');
  const parts = tables
    .filter((t) => !WRITTEN_WHEN_REFUSED.has(t))
    .sort()
    .map(
      (t) =>
        `select '${t}' as t, count(*) || ':' || coalesce(md5(string_agg((to_jsonb(r) - ${volatile})::text, '|' ` +
        `order by (to_jsonb(r) - ${volatile})::text)), '') as fp from "${t}" r`,
    );
  const sql = parts.join(' union all ');
  return async () =>
    Object.fromEntries((await db.raw(sql)).rows.map((row: { t: string; fp: string }) => [row.t, row.fp]));
}

/** The names of the tables whose fingerprint differs. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}
