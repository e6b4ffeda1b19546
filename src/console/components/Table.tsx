import type { ComponentChildren } from 'preact';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned (amounts). */
  numeric?: boolean;
}

/** C-4: a list is a table; an empty one says so; `next` links the following page by cursor. */
export function Table<T>({ rows, columns, empty, next }: { rows: T[]; columns: Column<T>[]; empty: string; next?: string }) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>{columns.map((c) => <th scope="col" class={c.numeric ? 'num' : undefined}>{c.header}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr>{columns.map((c) => <td class={c.numeric ? 'num' : undefined}>{c.cell(row)}</td>)}</tr>
          ))}
        </tbody>
      </table>
      {next ? <p class="pager"><a href={next} rel="next">Next page</a></p> : null}
    </div>
  );
}

/** The URL of the next page: the current filters with `startingAfter` set to the last row's id. */
export function nextPageUrl(path: string, filters: Record<string, string | undefined>, lastId: string | undefined, hasMore: boolean): string | undefined {
  if (!hasMore || !lastId) return undefined;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  params.set('startingAfter', lastId);
  return `${path}?${params}`;
}
