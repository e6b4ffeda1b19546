/**
 * The console's one-time form tokens (C-13): a form that moves money carries a random token; the first post of it
 * runs and its result (where to go, what to say) is stored under the token, and a resubmit of the same form (the
 * back button, a double click) answers that first result and records nothing new. Stored as idempotency keys of
 * the admin's scope, so housekeeping forgets them with the API's keys.
 */
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { findStoredResponse, storeResponse } from './repo.ts';

/** A finished form's answer (where to go, what to say); anything else (a confirmation asked) is not stored. */
export interface FormResult {
  redirect: string;
  notice: string;
}

/** A token as forms carry it (a UUID); anything else is not a token and the form runs unguarded. */
export const FORM_TOKEN_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Runs `work` once per (admin, token). The token's lock is held in a transaction of its own while `work` runs in
 * the services' own transactions: a concurrent post of the same token waits for it and then answers its result;
 * a refused `work` rolls back the claim, so the corrected form can be posted again.
 */
export function oncePerFormToken<T extends object>(
  db: Db,
  userId: string,
  token: string,
  work: () => Promise<T | FormResult>,
): Promise<(T | FormResult) & { replayed?: boolean }> {
  const scope = `console-form:${userId}`;
  return inTransaction(db, async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [scope, token]);
    const stored = await findStoredResponse(trx, scope, token);
    if (stored?.response_body) return { ...(JSON.parse(stored.response_body) as FormResult), replayed: true };
    const result = await work();
    if ('redirect' in result && 'notice' in result) {
      const { redirect, notice } = result;
      await storeResponse(trx, scope, token, 'form', 303, { redirect, notice }, {});
    }
    return result;
  });
}
