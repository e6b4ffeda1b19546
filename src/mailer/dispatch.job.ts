import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * The emails worker group (M-2). The outbox rows are the queue (claimed with a lease, as webhook deliveries are);
 * this job, every minute, wakes a worker's dispatcher in case it sleeps through a poll, and registers the group.
 */
export const dispatchEmailsJob = defineJob({
  name: 'emails.dispatch',
  group: 'emails',
  payload: z.object({}).optional(),
  queue: { retryLimit: 0, expireInSeconds: 60 },
  schedule: '* * * * *',
  concurrency: 1,
});
