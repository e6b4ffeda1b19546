import { defineJobHandler } from '../queue/job.ts';
import { resumePendingRefundsJob } from './resume-pending.job.ts';
import { resumePendingRefunds } from './resume.ts';

export const resumePendingRefundsHandler = defineJobHandler(resumePendingRefundsJob, {
  async run(deps) {
    const outcome = await resumePendingRefunds(deps.db, { config: deps.config, limit: 20 });
    if (outcome.completed + outcome.released + outcome.left > 0)
      deps.logger.info(outcome, 'resumed pending provider refunds');
    return outcome;
  },
});
