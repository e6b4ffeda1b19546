import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import {
  deleteLoginFailure,
  insertLoginAttempt,
  lockLoginAttempts,
  loginFailureStats,
  markLoginFailed,
  nthLatestLoginFailure,
} from './login-failures-repo.ts';
import { throttleVerdict } from './login-throttle-rules.ts';

/**
 * How long an attempt waits for others still being checked, and how often it looks (from 25 ms, doubling to 400 ms:
 * waiters must not load the database they wait on). An attempt still pending after ABANDONED_AFTER_MS was abandoned
 * (its process died between record and answer) and stops counting, so that is also the longest wait: whatever is
 * ahead has ended or no longer counts by then. The wait used to end at a fixed 5 s, which on a loaded machine
 * (argon2 takes seconds there) refused right passwords from one address when more than `max` came at once (issue 34:
 * tests that sign in got 429 under load; a team behind one NAT would too). Only the waiting changed: every attempt
 * is still judged by the same rules when its turn comes.
 */
const ABANDONED_AFTER_MS = 30_000;
const LONGEST_TURN_WAIT_MS = ABANDONED_AFTER_MS + 1_000;
const FIRST_POLL_MS = 25;
const LONGEST_POLL_MS = 400;

/**
 * D-16 with issue 33's rules (login-throttle-rules.ts: by address and by account, growing delays, a right password
 * from an address that has not failed goes through). The check and the record are one step (issue 20): under
 * locks on the email and the IP (advisory, so every web process takes the same ones), the attempt is judged and
 * recorded as pending before its password is checked. While attempts still being checked could prove failures
 * that refuse it, a new attempt waits for them to end instead of being checked: so however many attempts race in
 * however many processes, the rules hold as if they came one by one, and right ones arriving together (a team
 * behind one address) are let through in turn. Answers the attempt's row: the caller marks it failed
 * (recordLoginFailed) on wrong credentials and deletes it (forgetLoginAttempt) otherwise.
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
  const deadline = Date.now() + LONGEST_TURN_WAIT_MS;
  for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, LONGEST_POLL_MS)) {
    const judged = await inTransaction(db, async (trx) => {
      await lockLoginAttempts(trx, email, ip);
      const stats = await loginFailureStats(trx, email, ip, since, new Date(Date.now() - ABANDONED_AFTER_MS));
      const verdict = throttleVerdict(stats, max, Date.now());
      return verdict.kind === 'admit' ? insertLoginAttempt(trx, email, ip) : verdict;
    });
    if (typeof judged === 'string') return judged;
    if (judged.kind === 'refuse') return refuse(db, email, ip, since, windowMs, max, judged);
    if (Date.now() >= deadline) return refuse(db, email, ip, since, windowMs, max, { until: 0, full: [] });
    await new Promise((resolve) => setTimeout(resolve, poll));
  }
}

/**
 * The 429 with Retry-After: to the end of the delay that refuses, and to when every full count has dropped below
 * `max` again (its max-th latest failure leaving the window); at least 1 s.
 */
async function refuse(
  db: Db,
  email: string,
  ip: string,
  since: Date,
  windowMs: number,
  max: number,
  refusal: { until: number; full: ('ip' | 'email')[] },
): Promise<never> {
  const lastsUntil = await Promise.all(
    refusal.full.map(async (by) => {
      const at = await nthLatestLoginFailure(db, by, by === 'ip' ? ip : email, since, max);
      // A row that vanished since the verdict leaves a full window: a safe over-estimate.
      return (at ?? new Date()).getTime() + windowMs;
    }),
  );
  const until = Math.max(refusal.until, ...lastsUntil);
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
