import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * Every five minutes, finishes provider refunds left `pending` for more than ten minutes that nobody asked for
 * again: a process stopped mid-call, or the provider's answer was lost (a 5xx, a timeout). Each is asked for
 * again under its own Idempotency-Key (refunds/service.ts resumePendingRefunds), so its amount is not held back
 * for ever and a refund the provider made is recorded. A run asks about at most 20 (10 s each at worst).
 */
export const resumePendingRefundsJob = defineJob({
  name: 'refunds.resume-pending',
  group: 'lifecycle',
  payload: z.object({}),
  queue: { retryLimit: 1, retryDelay: 30, expireInSeconds: 270 },
  schedule: '*/5 * * * *',
  concurrency: 1,
});
