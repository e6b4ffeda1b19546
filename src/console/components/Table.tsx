import type { ComponentChildren } from 'preact';
import type { ListSort } from '../../db/paginate.ts';
import { nextSort, sortParam } from '../http/sort.ts';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned (amounts). */
  numeric?: boolean;
  /** Kept on one line (dates, references): a date broken at its hyphens reads as two. */
  nowrap?: boolean;
  /** The list's sort key for this column (C-15): its header becomes a link that sorts by it. */
  sort?: string;
}

/** How a sortable list orders its rows now, and its URL for another order (its filters kept, the cursor not). */
export interface Sorting {
  current?: ListSort;
  href: (sort: string) => string;
}

/** A column's header: a link toggling its order when the list sorts by it, with an arrow on the column in use. */
function Header<T>({ column, sorting }: { column: Column<T>; sorting?: Sorting }) {
  if (!sorting || !column.sort) return <>{column.header}</>;
  const active = sorting.current?.key === column.sort ? sorting.current : undefined;
  const arrow = active ? (active.descending ? ' ▼' : ' ▲') : '';
  return (
    <a class="sort" href={sorting.href(sortParam(nextSort(sorting.current, column.sort)))}>
      {column.header}
      {arrow ? <span aria-hidden="true">{arrow}</span> : null}
    </a>
  );
}

const ariaSort = <T,>(column: Column<T>, sorting?: Sorting) =>
  column.sort && sorting?.current?.key === column.sort
    ? sorting.current.descending
      ? 'descending'
      : 'ascending'
    : undefined;

/**
 * C-4: a list is a table; an empty one says so; `next` links the following page by cursor. A `stack` table
 * becomes one block per row on a narrow screen, each cell on its own line under its column's name (the
 * stylesheet's `.stack`), for rows whose cells need the width (an audit entry's changes) and for money lists,
 * whose amounts must stay on the screen (issue 34: at 360 px they had scrolled off). Its roles keep it a table
 * for screen readers, which some drop when a table's display changes. A stacked sortable table keeps its
 * sortable headers as a row of links above the rows.
 */
export function Table<T>({
  rows,
  columns,
  empty,
  next,
  stack,
  sorting,
}: {
  rows: T[];
  columns: Column<T>[];
  empty: string;
  next?: string;
  stack?: boolean;
  sorting?: Sorting;
}) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  const role = <R extends 'table' | 'rowgroup' | 'row' | 'columnheader' | 'cell'>(name: R) =>
    stack ? name : undefined;
  return (
    <div class={`table-wrap${stack ? ' stack' : ''}${sorting ? ' sortable' : ''}`}>
      <table role={role('table')}>
        <thead role={role('rowgroup')}>
          <tr role={role('row')}>
            {columns.map((c) => (
              <th
                scope="col"
                role={role('columnheader')}
                class={[c.numeric ? 'num' : '', sorting && !c.sort ? 'unsorted' : ''].join(' ').trim() || undefined}
                aria-sort={ariaSort(c, sorting)}
              >
                <Header column={c} sorting={sorting} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody role={role('rowgroup')}>
          {rows.map((row) => (
            <tr role={role('row')}>
              {columns.map((c) => (
                <td
                  role={role('cell')}
                  data-label={stack ? c.header : undefined}
                  class={c.numeric ? 'num' : c.nowrap ? 'nowrap' : undefined}
                >
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
