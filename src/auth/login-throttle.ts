import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import {
  countLoginFailures,
  deleteLoginFailure,
  insertLoginAttempt,
  lockLoginAttempts,
  markLoginFailed,
  nthLatestLoginFailure,
} from './repo.ts';

/** How long an attempt waits for others still being checked before it is refused, and how often it looks. */
const TURN_WAIT_MS = 5_000;
const TURN_POLL_MS = 25;
/** A pending attempt older than this was abandoned (its process died between record and answer). */
const ABANDONED_AFTER_MS = 30_000;

/**
 * D-16: `max` failed logins in the window for one email, or from one IP, refuse further attempts, even with
 * the right password. The check and the record are one step (issue 20): under locks on the email and the IP
 * (advisory, so every web process takes the same ones), the attempt is counted and recorded as pending before
 * its password is checked. While failures plus attempts still being checked reach `max`, a new attempt waits
 * (up to TURN_WAIT_MS) for them to end instead of being checked: so however many attempts race in however
 * many processes, at most `max` wrong passwords are checked per window for an email or an IP, and right ones
 * arriving together (a team behind one address) are let through in turn, not refused. Answers the attempt's
 * row: the caller marks it failed (recordLoginFailed) on wrong credentials and deletes it
 * (forgetLoginAttempt) otherwise. Retry-After counts to the moment every blocking count has dropped below
 * `max` again (the max-th latest failure leaving the window).
 */
export async function beginLoginAttempt(
  db: Db,
  email: string,
  ip: string,
  max: number,
  windowMinutes: number,
): Promise<string> {
  const windowMs = windowMinutes * 60_000;
  const since = new Date(Date.now() - windowMs);
  const deadline = Date.now() + TURN_WAIT_MS;
  for (;;) {
    const admitted = await inTransaction(db, async (trx) => {
      await lockLoginAttempts(trx, email, ip);
      const counts = await countLoginFailures(trx, email, ip, since, new Date(Date.now() - ABANDONED_AFTER_MS));
      if (counts.byEmail >= max || counts.byIp >= max) return { counts, refused: true };
      // Attempts being checked might all prove failures: this one waits its turn rather than pass the limit.
      if (counts.byEmail + counts.pendingByEmail >= max || counts.byIp + counts.pendingByIp >= max)
        return { counts, refused: false };
      return insertLoginAttempt(trx, email, ip);
    });
    if (typeof admitted === 'string') return admitted;
    if (admitted.refused || Date.now() >= deadline) return refuse(db, email, ip, since, windowMs, max, admitted.counts);
    await new Promise((resolve) => setTimeout(resolve, TURN_POLL_MS));
  }
}

/** The 429 with Retry-After: to when every blocking count has dropped below `max` (at least 1 s). */
async function refuse(
  db: Db,
  email: string,
  ip: string,
  since: Date,
  windowMs: number,
  max: number,
  counts: { byEmail: number; byIp: number },
): Promise<never> {
  const { byEmail, byIp } = counts;
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
  throw new AppError('rate_limited', 'Too many failed logins; try again later', {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

/** An attempt that ended neither in success nor in wrong credentials (the provider failed) is no failure. */
export async function forgetLoginAttempt(db: Db, attemptId: string): Promise<void> {
  await deleteLoginFailure(db, attemptId);
}

/** Wrong credentials: the attempt counts as a failure from now on. */
export async function recordLoginFailed(db: Db, attemptId: string): Promise<void> {
  await markLoginFailed(db, attemptId);
}
