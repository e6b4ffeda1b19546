import type { Config } from '../config.ts';
import type { AttemptOutcome } from './dispatch-repo.ts';
import type { SendOutcome } from './send.ts';

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

/**
 * Where one attempt leaves its delivery (D-72): a 2xx delivers it; anything else schedules the next attempt
 * after the schedule's delay for this attempt (a longer Retry-After wins), or fails it when the schedule is
 * spent. `attemptsBefore` is the delivery's attempt count when the send started.
 */
export function attemptOutcome(
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE_SECONDS'>,
  deliveryId: string,
  attemptsBefore: number,
  sent: SendOutcome,
  now = Date.now(),
): AttemptOutcome {
  const attempt = attemptsBefore + 1;
  const logged = {
    delivery_id: deliveryId,
    attempt,
    status_code: sent.statusCode,
    latency_ms: sent.latencyMs,
    error: sent.error,
    response_body: sent.responseBody,
  };
  if (sent.ok) return { ...logged, status: 'delivered', next_attempt_at: null };
  const delayMs = nextAttemptDelayMs(retrySchedule(config), attempt, parseRetryAfter(sent.retryAfter, now));
  if (delayMs === null) return { ...logged, status: 'failed', next_attempt_at: null };
  return { ...logged, status: 'pending', next_attempt_at: new Date(now + delayMs) };
}
