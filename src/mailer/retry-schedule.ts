import type { Config } from '../config.ts';

/** M-2: seconds after each failed attempt before the next; six attempts in all, then `failed`. */
export const DEFAULT_EMAIL_RETRY_SCHEDULE_SECONDS = [10, 60, 300, 1800, 7200];

export function emailRetrySchedule(config: Pick<Config, 'EMAIL_RETRY_SCHEDULE_SECONDS'>): number[] {
  const given = config.EMAIL_RETRY_SCHEDULE_SECONDS;
  return given ? given.split(',').map(Number) : DEFAULT_EMAIL_RETRY_SCHEDULE_SECONDS;
}

/** When the attempt after `attemptsMade` failed ones is due, or null when the schedule is exhausted. */
export function nextEmailAttemptAt(schedule: number[], attemptsMade: number, now: Date): Date | null {
  const seconds = schedule[attemptsMade - 1];
  return seconds === undefined ? null : new Date(now.getTime() + seconds * 1000);
}
