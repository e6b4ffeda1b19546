import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/** Attempts after the first; the handler closes the run when the last one fails. */
export const LIFECYCLE_SWEEP_RETRY_LIMIT = 3;

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
  queue: {
    retryLimit: LIFECYCLE_SWEEP_RETRY_LIMIT,
    retryDelay: 30,
    expireInSeconds: 4 * 3600,
    heartbeatSeconds: 30,
    notify: true,
  },
  schedule: (config) => config.LIFECYCLE_SCHEDULE,
  concurrency: 1,
});
