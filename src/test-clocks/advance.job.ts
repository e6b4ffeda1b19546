import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/** Attempts after the first; the handler marks the clock `failed` when the last one fails. */
export const ADVANCE_TEST_CLOCK_RETRY_LIMIT = 3;

/**
 * A test clock's advance (TC-3), enqueued with the clock's move to `advancing`. A worker killed mid-way stops
 * heart-beating; pg-boss fails the job after `heartbeatSeconds` and retries it, and the retry resumes at the last
 * moment whose steps all committed (the clock's `advance_cursor`): the steps are idempotent, so nothing is done twice.
 */
export const advanceTestClockJob = defineJob({
  name: 'test-clocks.advance',
  group: 'lifecycle',
  payload: z.object({ testClockId: z.uuid() }),
  queue: {
    retryLimit: ADVANCE_TEST_CLOCK_RETRY_LIMIT,
    retryDelay: 2,
    expireInSeconds: 4 * 3600,
    heartbeatSeconds: 10,
    notify: true,
  },
  concurrency: 2,
});
