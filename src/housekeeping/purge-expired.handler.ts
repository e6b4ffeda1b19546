import { defineJobHandler } from '../queue/job.ts';
import { purgeExpiredJob } from './purge-expired.job.ts';
import { purgeExpired } from './service.ts';

export const purgeExpiredHandler = defineJobHandler(purgeExpiredJob, {
  async run(deps, payload) {
    const counts = await purgeExpired(deps.db, payload.asOf ? new Date(payload.asOf) : new Date());
    deps.logger.info(counts, 'purged expired records');
    return counts;
  },
});
