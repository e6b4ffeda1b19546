import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * Recomputes every product's derived metrics (D-20) every 5 minutes, so a product read is never more than
 * about 5 minutes stale; `metricsRefreshedAt` on each product says when. A failed run is retried once;
 * the next scheduled run comes soon anyway, and one still running after 4 minutes is stuck.
 */
export const refreshProductMetricsJob = defineJob({
  name: 'products.refresh-metrics',
  group: 'lifecycle',
  payload: z.object({}),
  queue: { retryLimit: 1, retryDelay: 30, expireInSeconds: 240 },
  schedule: '*/5 * * * *',
  concurrency: 1,
});
