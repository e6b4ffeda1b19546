/**
 * A list's `sort` query parameter (C-15): `sort=dueDate` ascending, `sort=-total` descending, one of the keys the
 * list's service names. An unknown key is not an error page: the list is shown in its usual order with a message
 * saying which keys it takes, and its filters kept.
 */
import { z } from 'zod';
import type { ListSort } from '../../db/paginate.ts';

/** The query field every sortable list adds to its schema. */
export const sortField = { sort: z.string().trim().max(60).optional() };

export interface SortChoice {
  /** The order asked for, when the list knows its key. */
  sort?: ListSort;
  /** Why the order asked for was not used, in words. */
  problem?: string;
}

export function readSort(
  text: string | undefined,
  keys: readonly string[],
  labels: Record<string, string>,
): SortChoice {
  if (!text) return {};
  const descending = text.startsWith('-');
  const key = descending ? text.slice(1) : text;
  if (keys.includes(key)) return { sort: { key, descending } };
  const known = keys.map((k) => labels[k] ?? k).join(', ');
  return { problem: `This list cannot be sorted by “${text}”. It is shown newest first; sort it by ${known}.` };
}

/** The parameter's value for an order: `-` before the key when descending. */
export const sortParam = (sort: ListSort) => `${sort.descending ? '-' : ''}${sort.key}`;

/** What a click on a column's header asks for: ascending first, then the other way round. */
export function nextSort(current: ListSort | undefined, key: string): ListSort {
  return { key, descending: current?.key === key && !current.descending };
}
