import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * Deletes expired sessions, idempotency records past 24 h and old login failures and ended shared rate-limit windows.
 */
export const purgeExpiredJob = defineJob({
  name: 'housekeeping.purge-expired',
  group: 'lifecycle',
  payload: z.object({ asOf: z.iso.datetime().optional() }),
  queue: { retryLimit: 3, retryDelay: 30, expireInSeconds: 300 },
  schedule: '17 * * * *',
  concurrency: 1,
});
