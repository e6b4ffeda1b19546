import { z } from 'zod';
import { defineJob } from '../queue/job.ts';
import { purgeExpired } from './service.ts';

/** Deletes expired sessions, idempotency records past 24 h and old login failures. */
export const purgeExpiredJob = defineJob({
  name: 'housekeeping.purge-expired',
  group: 'lifecycle',
  payload: z.object({ asOf: z.iso.datetime().optional() }),
  queue: { retryLimit: 3, retryDelay: 30, expireInSeconds: 300 },
  schedule: '17 * * * *',
  concurrency: 1,
  async run(deps, payload) {
    const counts = await purgeExpired(deps.db, payload.asOf ? new Date(payload.asOf) : new Date());
    deps.logger.info(counts, 'purged expired records');
    return counts;
  },
});
