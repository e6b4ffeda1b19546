/**
 * What every money list shares for finding things (C-15): a customer picked by name rather than id, and the count
 * and sums of the filtered rows per currency.
 */
import { customerIdsMatching, customerNames } from '../../customers/service.ts';
import type { Db } from '../../db/knex.ts';
import { money } from '../components/format.ts';
import { label } from '../components/labels.ts';
import type { Sorting } from '../components/Table.tsx';
import { readSort, type SortChoice, sortParam } from '../http/sort.ts';

const CHOICES = 20;

/** The `customer=<text>` filter resolved: one customer (its id), none, or several to choose from. */
export type CustomerPick =
  | { kind: 'id'; customerId?: string }
  | { kind: 'none'; text: string }
  | { kind: 'several'; text: string; choices: { id: string; name: string }[] };

export async function pickCustomer(db: Db, query: { customerId?: string; customer?: string }): Promise<CustomerPick> {
  if (query.customerId || !query.customer) return { kind: 'id', customerId: query.customerId };
  const ids = await customerIdsMatching(db, query.customer, CHOICES + 1);
  if (ids.length === 1) return { kind: 'id', customerId: ids[0] };
  if (ids.length === 0) return { kind: 'none', text: query.customer };
  const names = await customerNames(db, ids);
  return {
    kind: 'several',
    text: query.customer,
    choices: ids.slice(0, CHOICES).map((id) => ({ id, name: names.get(id) ?? id })),
  };
}

/** When the text names no customer or several: say so, and offer each match as a link keeping the other filters. */
export function CustomerChoice({ pick, linkTo }: { pick: CustomerPick; linkTo: (customerId: string) => string }) {
  if (pick.kind === 'id') return null;
  if (pick.kind === 'none') return <p class="empty">{`No customer matches “${pick.text}”.`}</p>;
  return (
    <div class="choice">
      <p>{`Several customers match “${pick.text}”: choose one.`}</p>
      <ul>
        {pick.choices.map((c) => (
          <li>
            <a href={linkTo(c.id)}>{c.name}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The most rows a money list counts and sums (C-15): past it the list says so and asks for a narrower filter, so
 * that no view of a list reads the whole book (db/capped.ts has the figures). A customer's, a status's or a month's
 * invoices of a busy book are well under it.
 */
export const TOTALS_CAP = 10_000;

/** A list's count and sums per currency, or that it holds more rows than a view reads. */
export type ListTotals<T> = T[] | 'over cap';

/**
 * The count and sums of the rows a list's filters keep (C-15: every money list, the unfiltered one too), read over at
 * most TOTALS_CAP rows: `read` answers undefined past `cap` rows, and the list then asks for a narrower filter.
 */
export async function listTotals<T>(read: (cap: number) => Promise<T[] | undefined>): Promise<ListTotals<T>> {
  return (await read(TOTALS_CAP)) ?? 'over cap';
}

/** The count and sums of the filtered rows, per currency (never added across currencies), or why there are none. */
export function Totals<T extends { currency: string; count: number }>({
  totals,
  noun,
  sums,
}: {
  totals: ListTotals<T>;
  noun: [string, string];
  sums: (row: T) => [string, string][];
}) {
  if (totals === 'over cap') {
    const why = `More than ${TOTALS_CAP.toLocaleString('en-US')} ${noun[1]} match: narrow`;
    const how = 'the list by status, customer or dates to see its count and totals per currency.';
    return <p class="totals muted">{`${why} ${how}`}</p>;
  }
  if (totals.length === 0) return null;
  return (
    <ul class="totals" aria-label="Totals of the filtered rows">
      {totals.map((r) => (
        <li>
          <strong>{`${r.count} ${r.count === 1 ? noun[0] : noun[1]}`}</strong>
          {sums(r)
            .map(([what, amount]) => ` · ${what} ${money(amount, r.currency)}`)
            .join('')}
        </li>
      ))}
    </ul>
  );
}

/** A list's URL with these parameters, empty ones left out. */
export function listUrl(path: string, params: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1])));
  return search.size ? `${path}?${search}` : path;
}

/**
 * A list's order (C-15): the `sort` asked for if the list knows its key, the headers' links keeping `params` (the
 * filters), and the parameters a next-page link carries (the filters and the order in use).
 */
export function listOrder(
  path: string,
  params: Record<string, string | undefined>,
  asked: { sort?: string; keys: readonly string[]; labels: Record<string, string> },
): SortChoice & { sorting: Sorting; pageParams: Record<string, string | undefined> } {
  const choice = readSort(asked.sort, asked.keys, asked.labels);
  return {
    ...choice,
    sorting: { current: choice.sort, href: (sort) => listUrl(path, { ...params, sort }) },
    pageParams: { ...params, sort: choice.sort ? sortParam(choice.sort) : undefined },
  };
}

/** Why the list is not in the order asked for, above it. */
export const SortProblem = ({ problem }: { problem?: string }) =>
  problem ? (
    <p class="error" role="alert">
      {problem}
    </p>
  ) : null;

/** A list's filter by one of a closed list of values (`name`), "Any" for none, each value shown by `words`. */
export function ChoiceFilter({
  id,
  name,
  title,
  options,
  value,
  words = label,
}: {
  id: string;
  name: string;
  title: string;
  options: readonly string[];
  value?: string;
  words?: (value: string) => string;
}) {
  return (
    <p class="field">
      <label for={id}>{title}</label>
      <select id={id} name={name}>
        <option value="">Any</option>
        {options.map((o) => (
          <option value={o} selected={o === value}>
            {words(o)}
          </option>
        ))}
      </select>
    </p>
  );
}

/** A list's status filter (`status`), the same field on every list that has one. */
export function StatusFilter({ statuses, value }: { statuses: readonly string[]; value?: string }) {
  return <ChoiceFilter id="filter-status" name="status" title="Status" options={statuses} value={value} />;
}

/** A list's filter by a customer's id (`customerId`), as a customer's page links to it. */
export function CustomerIdFilter({ value }: { value?: string }) {
  return (
    <p class="field">
      <label for="filter-customer">Customer ID</label>
      <input id="filter-customer" name="customerId" value={value ?? ''} />
    </p>
  );
}
