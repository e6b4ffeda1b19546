import { defineJobHandler } from '../queue/job.ts';
import { insertOpenRunRow } from './repo.ts';
import { executeRun, failRun } from './runs.ts';
import { LIFECYCLE_SWEEP_RETRY_LIMIT, lifecycleSweepJob } from './sweep.job.ts';

export const lifecycleSweepHandler = defineJobHandler(lifecycleSweepJob, {
  async run(deps, payload, job) {
    let runId = payload.runId;
    if (!runId) {
      // A scheduled occurrence: its job id names its run (a retry finds the run it opened).
      runId = job.jobId;
      await insertOpenRunRow(deps.db, { id: runId, status: 'queued', jobId: runId, asOf: null });
    }
    try {
      const summary = await executeRun(deps, runId, job.jobId);
      return summary ?? { skipped: true, runId };
    } catch (error) {
      // The last attempt closes the run, so the next cron call opens a fresh one.
      if (job.retryCount >= LIFECYCLE_SWEEP_RETRY_LIMIT) await failRun(deps.db, runId, error).catch(() => {});
      throw error;
    }
  },
});
