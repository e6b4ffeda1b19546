import type { Knex } from 'knex';

/** A list's order asked for by a column (C-15): a key the list names in its `SortColumns`, and the direction. */
export interface ListSort {
  key: string;
  descending: boolean;
}

/**
 * A page request (D-5): at most `limit` rows after the row named `startingAfter`, in creation order; the console
 * also asks for newest first (C-4), or for a column's order (`sort`, C-15). Parsed from a query string by
 * http/schemas.ts `pageQuery`.
 */
export interface PageQuery {
  limit: number;
  startingAfter?: string | undefined;
  newestFirst?: boolean;
  sort?: ListSort | undefined;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * The columns a list can be sorted by: each key's SQL expression over the list's own table, unqualified (it is
 * read again for the cursor's row), never null (a nullable column is coalesced so that the keyset compares it).
 */
export type SortColumns = Readonly<Record<string, string>>;

/**
 * Pages `query` (rows of `table`) in creation order (D-5), or newest first when asked. `startingAfter`
 * names the last id of the previous page; the keyset (created_at, id) keeps pages stable while rows are added.
 * A `sort` puts its column first in the keyset, (column, created_at, id), all in its direction.
 */
export async function paginate<T extends { id: string }>(
  query: Knex.QueryBuilder,
  table: string,
  page: PageQuery,
  sortable: SortColumns = {},
): Promise<Page<T>> {
  const sorted = page.sort ? sortable[page.sort.key] : undefined;
  if (page.sort && sorted === undefined) throw new Error(`${table} cannot be sorted by ${page.sort.key}`);
  const descending = page.sort ? page.sort.descending : page.newestFirst;
  const order = descending ? 'desc' : 'asc';
  const first = sorted === undefined ? '' : `${sorted}, `;
  if (page.startingAfter) {
    query.whereRaw(`(${first}??, ??) ${descending ? '<' : '>'} (select ${first}created_at, id from ?? where id = ?)`, [
      `${table}.created_at`,
      `${table}.id`,
      table,
      page.startingAfter,
    ]);
  }
  const rows = (await query
    .orderByRaw(`${sorted === undefined ? '' : `${sorted} ${order}, `}?? ${order}, ?? ${order}`, [
      `${table}.created_at`,
      `${table}.id`,
    ])
    .limit(page.limit + 1)) as T[];
  const hasMore = rows.length > page.limit;
  return { rows: hasMore ? rows.slice(0, page.limit) : rows, hasMore };
}
