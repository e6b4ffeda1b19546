import { z } from 'zod';
import { notFound } from '../../errors.ts';
import { uuid } from '../../http/schemas.ts';

/**
 * An id from the URL: anything but a UUID names nothing (and must not reach a uuid column): a 404 of `what` (as D-1 for
 * the API).
 */
export function uuidParam(id: string | undefined, what: string): string {
  if (!uuid.safeParse(id).success) throw notFound(what);
  return id!;
}

/**
 * `?create=1` on a list page opens its create form folded on it. Links such as a customer's "New invoice" ask
 * for it with the customer as the page's `customerId`, which the form starts with (the lists filter by it too).
 */
export const createFormQuery = z.object({
  create: z.literal('1', { error: 'must be 1 (opens the create form)' }).optional(),
});

/** The page at `path` with its create form (`formId`, the form's <details>) open and started for a customer. */
export const createFormUrl = (path: string, formId: string, customerId: string) =>
  `${path}?${new URLSearchParams({ customerId, create: '1' })}#${formId}`;
