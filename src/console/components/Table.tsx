import type { ComponentChildren } from 'preact';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned (amounts). */
  numeric?: boolean;
}

/**
 * C-4: a list is a table; an empty one says so; `next` links the following page by cursor. A `stack` table
 * becomes one block per row on a narrow screen, each cell on its own line under its column's name (the
 * stylesheet's `.stack`), for rows whose cells need the width (an audit entry's changes). Its roles keep it
 * a table for screen readers, which some drop when a table's display changes.
 */
export function Table<T>({
  rows,
  columns,
  empty,
  next,
  stack,
}: {
  rows: T[];
  columns: Column<T>[];
  empty: string;
  next?: string;
  stack?: boolean;
}) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  const role = <R extends 'table' | 'rowgroup' | 'row' | 'columnheader' | 'cell'>(name: R) =>
    stack ? name : undefined;
  return (
    <div class={stack ? 'table-wrap stack' : 'table-wrap'}>
      <table role={role('table')}>
        <thead role={role('rowgroup')}>
          <tr role={role('row')}>
            {columns.map((c) => (
              <th scope="col" role={role('columnheader')} class={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role={role('rowgroup')}>
          {rows.map((row) => (
            <tr role={role('row')}>
              {columns.map((c) => (
                <td role={role('cell')} data-label={stack ? c.header : undefined} class={c.numeric ? 'num' : undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {next ? (
        <p class="pager">
          <a href={next} rel="next">
            Next page
          </a>
        </p>
      ) : null}
    </div>
  );
}

/** The URL of the next page: the current filters with `startingAfter` set to the last row's id. */
export function nextPageUrl(
  path: string,
  filters: Record<string, string | undefined>,
  lastId: string | undefined,
  hasMore: boolean,
): string | undefined {
  if (!hasMore || !lastId) return undefined;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  params.set('startingAfter', lastId);
  return `${path}?${params}`;
}
