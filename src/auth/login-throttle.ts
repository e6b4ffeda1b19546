import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { countLoginFailures, deleteLoginFailure, insertLoginFailure, lockLoginAttempts, nthLatestLoginFailure } from './repo.ts';

/**
 * D-16: `max` failed logins in the window for one email, or from one IP, refuse further attempts, even with
 * the right password. The check and the record are one step (issue 20): under locks on the email and the IP
 * (advisory, so every web process takes the same ones), the attempt is counted and, when admitted, recorded
 * as a failure before its password is checked, so however many attempts race in however many processes, at
 * most `max` are checked per window for an email or an IP. Answers the attempt's failure row: the caller
 * keeps it when the credentials are wrong, and deletes it (forgetLoginAttempt) or clears the email's
 * failures when the attempt turns out not to be a failure. Retry-After counts to the moment every blocking
 * count has dropped below `max` again (the max-th latest failure leaving the window).
 */
export async function beginLoginAttempt(db: Db, email: string, ip: string, max: number, windowMinutes: number): Promise<string> {
  const windowMs = windowMinutes * 60_000;
  const since = new Date(Date.now() - windowMs);
  const admitted = await inTransaction(db, async (trx) => {
    await lockLoginAttempts(trx, email, ip);
    const { byEmail, byIp } = await countLoginFailures(trx, email, ip, since);
    if (byEmail >= max || byIp >= max) return { byEmail, byIp };
    return insertLoginFailure(trx, email, ip);
  });
  if (typeof admitted === 'string') return admitted;

  const { byEmail, byIp } = admitted;
  const [emailAt, ipAt] = await Promise.all([
    byEmail >= max ? nthLatestLoginFailure(db, 'email', email, since, max) : undefined,
    byIp >= max ? nthLatestLoginFailure(db, 'ip', ip, since, max) : undefined,
  ]);
  // A row that vanished between the two queries leaves a full window: a safe over-estimate.
  const freeAt = (at: Date | undefined) => (at ?? new Date()).getTime() + windowMs;
  let until = 0;
  if (byEmail >= max) until = Math.max(until, freeAt(emailAt));
  if (byIp >= max) until = Math.max(until, freeAt(ipAt));
  const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
  throw new AppError('rate_limited', 'Too many failed logins; try again later', { headers: { 'Retry-After': String(retryAfter) } });
}

/** An attempt that ended neither in success nor in wrong credentials (the provider failed) is no failure. */
export async function forgetLoginAttempt(db: Db, attemptId: string): Promise<void> {
  await deleteLoginFailure(db, attemptId);
}
