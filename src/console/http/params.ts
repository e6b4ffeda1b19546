import { notFound } from '../../errors.ts';
import { uuid } from '../../http/schemas.ts';

/** An id from the URL: anything but a UUID names nothing (and must not reach a uuid column): a 404 of `what` (as D-1 for the API). */
export function uuidParam(id: string | undefined, what: string): string {
  if (!uuid.safeParse(id).success) throw notFound(what);
  return id!;
}
