import { defineJobHandler } from '../queue/job.ts';
import { advanceTestClock, failTestClockAdvance } from './advance.ts';
import { ADVANCE_TEST_CLOCK_RETRY_LIMIT, advanceTestClockJob } from './advance.job.ts';

export const advanceTestClockHandler = defineJobHandler(advanceTestClockJob, {
  async run(deps, payload, job) {
    try {
      return await advanceTestClock(deps, payload.testClockId);
    } catch (error) {
      // The last attempt leaves the clock `failed` (TC-1) at the last moment it reached, so it can be advanced again.
      if (job.retryCount >= ADVANCE_TEST_CLOCK_RETRY_LIMIT)
        await failTestClockAdvance(deps.db, payload.testClockId, error).catch(() => {});
      throw error;
    }
  },
});
