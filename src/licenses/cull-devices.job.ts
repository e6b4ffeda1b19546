import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * D-102: every minute, removes the dead devices of floating-seat licenses and emits license.device_culled.
 * Their seats were already free for validate; this tidies the rows and tells integrators. A failed run is
 * retried once; the next minute's run comes soon anyway, so one still running after 50 s is stuck.
 */
export const cullDeadDevicesJob = defineJob({
  name: 'licenses.cull-dead-devices',
  group: 'lifecycle',
  payload: z.object({}),
  queue: { retryLimit: 1, retryDelay: 10, expireInSeconds: 50 },
  schedule: '* * * * *',
  concurrency: 1,
});
