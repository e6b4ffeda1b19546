import { z } from 'zod';
import { defineJob } from '../queue/job.ts';
import { insertOpenRunRow } from './repo.ts';
import { executeRun, failRun } from './runs.ts';

const RETRY_LIMIT = 3;

/**
 * The lifecycle sweep (D-80). A cron call enqueues it with the run it opened; a scheduled occurrence
 * (LIFECYCLE_SCHEDULE) comes without one and opens its own, or does nothing while another run is open.
 * A worker killed mid-sweep stops heart-beating; pg-boss fails the job after 30 s and retries it, and
 * the retry resumes the same run as of the same instant (the sweep is idempotent, D-82).
 */
export const lifecycleSweepJob = defineJob({
  name: 'lifecycle.sweep',
  group: 'lifecycle',
  payload: z.object({ runId: z.uuid().optional() }),
  queue: { retryLimit: RETRY_LIMIT, retryDelay: 30, expireInSeconds: 4 * 3600, heartbeatSeconds: 30, notify: true },
  schedule: (config) => config.LIFECYCLE_SCHEDULE,
  concurrency: 1,
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
      if (job.retryCount >= RETRY_LIMIT) await failRun(deps.db, runId, error).catch(() => {});
      throw error;
    }
  },
});
