import type { Config } from '../config.ts';

/**
 * D-72: seconds to wait after each failed attempt before the next (Svix / Standard Webhooks schedule):
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; after the last, the delivery is marked failed.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

/** Retry-After is honoured when longer than the schedule, up to a day. */
const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

export function retrySchedule(config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE_SECONDS'>): number[] {
  const given = config.WEBHOOK_RETRY_SCHEDULE_SECONDS;
  return given ? given.split(',').map(Number) : DEFAULT_RETRY_SCHEDULE_SECONDS;
}

/** A Retry-After header (delay in seconds or an HTTP date) as milliseconds from `now`, or null. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Milliseconds until the next attempt after `attemptsMade` failed attempts, or null when the schedule is
 * exhausted. ±10% jitter spreads the retries of many deliveries that failed together.
 */
export function nextAttemptDelayMs(
  schedule: number[],
  attemptsMade: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (0.9 + 0.2 * random());
  return Math.round(Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
}
