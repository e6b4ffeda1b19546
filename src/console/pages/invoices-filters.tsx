import { z } from 'zod';
import { CustomerIdFilter, StatusFilter } from './list-helpers.tsx';
import type { Page, PageQuery } from '../../db/paginate.ts';
import { pagingQuery, uuid } from '../../http/schemas.ts';
import { sortField } from '../http/sort.ts';

export const PAGE_SIZE = 50;
const EXPORT_BATCH = 500;

/** A calendar day, `YYYY-MM-DD`, read as UTC. */
const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(
    (v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
    'must be a real date',
  );

/** The query of a money list: paging plus the filters of console.md, each a query parameter (C-4). */
export function moneyListQuery<const S extends readonly [string, ...string[]]>(statuses: S) {
  return pagingQuery().extend({
    status: z.enum(statuses).optional(),
    customerId: uuid.optional(),
    /** A customer picked by name, email or company (C-15), resolved to `customerId` when one matches. */
    customer: z.string().trim().max(200).optional(),
    from: isoDay.optional(),
    to: isoDay.optional(),
    ...sortField,
  });
}

export interface MoneyListFilters {
  status?: string;
  customerId?: string;
  customer?: string;
  from?: string;
  to?: string;
  /** The list's order (C-15): kept by the filter form, not by the export. */
  sort?: string;
}

/** `from` and `to` as the services take them: `to` includes its whole (UTC) day, so the bound is the next midnight. */
export function createdRange(filters: MoneyListFilters): { createdFrom?: Date; createdBefore?: Date } {
  const day = (v: string) => new Date(`${v}T00:00:00Z`);
  return {
    createdFrom: filters.from ? day(filters.from) : undefined,
    createdBefore: filters.to ? new Date(day(filters.to).getTime() + 86_400_000) : undefined,
  };
}

/** The filters alone (no cursor), for the next-page and export links. */
export const filterValues = (q: MoneyListFilters): Record<string, string | undefined> => ({
  status: q.status,
  customerId: q.customerId,
  customer: q.customerId ? undefined : q.customer,
  from: q.from,
  to: q.to,
});

export function withFilters(path: string, filters: MoneyListFilters): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filterValues(filters))) if (v) params.set(k, v);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

export const firstPage = (startingAfter?: string): PageQuery => ({
  limit: PAGE_SIZE,
  startingAfter,
  newestFirst: true,
});

/** Every row of a list in keyset batches, newest first: an export streams them without holding the list. */
export async function* everyBatch<T extends { id: string }>(
  list: (page: PageQuery) => Promise<Page<T>>,
): AsyncGenerator<T[]> {
  let startingAfter: string | undefined;
  for (;;) {
    const { rows, hasMore } = await list({ limit: EXPORT_BATCH, startingAfter, newestFirst: true });
    if (rows.length > 0) yield rows;
    if (!hasMore || rows.length === 0) return;
    startingAfter = rows.at(-1)!.id;
  }
}

/** The filter form (GET, so a filtered list is a URL) and the CSV link carrying the same filters. */
export function FilterForm({
  action,
  statuses,
  values,
  exportPath,
  dated = 'Created',
}: {
  action: string;
  statuses: readonly string[];
  values: MoneyListFilters;
  exportPath: string;
  /** What `from` and `to` bound, in words: payments are filtered by the day received (C-13). */
  dated?: 'Created' | 'Received';
}) {
  return (
    <>
      <form method="get" action={action} class="filters">
        <StatusFilter statuses={statuses} value={values.status} />
        <p class="field">
          <label for="filter-customer-text">Customer (name, email or company)</label>
          <input id="filter-customer-text" name="customer" type="search" value={values.customer ?? ''} />
        </p>
        <CustomerIdFilter value={values.customerId} />
        <p class="field">
          <label for="filter-from">{`${dated} from`}</label>
          <input id="filter-from" name="from" type="date" value={values.from ?? ''} />
        </p>
        <p class="field">
          <label for="filter-to">{`${dated} to (inclusive)`}</label>
          <input id="filter-to" name="to" type="date" value={values.to ?? ''} />
        </p>
        {values.sort ? <input type="hidden" name="sort" value={values.sort} /> : null}
        <button type="submit">Filter</button>
      </form>
      <p class="export">
        <a href={withFilters(exportPath, values)} download>
          Export CSV
        </a>
      </p>
    </>
  );
}
