import type { Knex } from 'knex';

/**
 * A page request (D-5): at most `limit` rows after the row named `startingAfter`, in creation order; the console
 * also asks for newest first (C-4). Parsed from a query string by http/schemas.ts `pageQuery`.
 */
export interface PageQuery {
  limit: number;
  startingAfter?: string | undefined;
  newestFirst?: boolean;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * Pages `query` (rows of `table`) in creation order (D-5), or newest first when asked. `startingAfter`
 * names the last id of the previous page; the keyset (created_at, id) keeps pages stable while rows are added.
 */
export async function paginate<T extends { id: string }>(
  query: Knex.QueryBuilder,
  table: string,
  page: PageQuery,
): Promise<Page<T>> {
  const order = page.newestFirst ? 'desc' : 'asc';
  if (page.startingAfter) {
    query.whereRaw(`(??, ??) ${page.newestFirst ? '<' : '>'} (select created_at, id from ?? where id = ?)`, [
      `${table}.created_at`,
      `${table}.id`,
      table,
      page.startingAfter,
    ]);
  }
  const rows = (await query
    .orderBy([
      { column: `${table}.created_at`, order },
      { column: `${table}.id`, order },
    ])
    .limit(page.limit + 1)) as T[];
  const hasMore = rows.length > page.limit;
  return { rows: hasMore ? rows.slice(0, page.limit) : rows, hasMore };
}
