import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * Deletes expired sessions, idempotency records past 24 h, old login failures, ended shared rate-limit windows and
 * portal rows, and test clocks past their `deletesAfter` with their customers' records (TC-1).
 */
export const purgeExpiredJob = defineJob({
  name: 'housekeeping.purge-expired',
  group: 'lifecycle',
  payload: z.object({ asOf: z.iso.datetime().optional() }),
  queue: { retryLimit: 3, retryDelay: 30, expireInSeconds: 300 },
  schedule: '17 * * * *',
  concurrency: 1,
});
