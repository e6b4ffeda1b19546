import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { countLoginFailures, nthLatestLoginFailure } from './repo.ts';

/**
 * D-16: `max` failed logins in the window for one email, or from one IP, refuse further attempts,
 * even with the right password. Retry-After counts to the moment every blocking count has dropped
 * below `max` again (the max-th latest failure leaving the window), not to the oldest failure.
 */
export async function assertLoginNotThrottled(db: Db, email: string, ip: string, max: number, windowMinutes: number): Promise<void> {
  const windowMs = windowMinutes * 60_000;
  const since = new Date(Date.now() - windowMs);
  const { byEmail, byIp } = await countLoginFailures(db, email, ip, since);
  if (byEmail < max && byIp < max) return;

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
