import { defineJobHandler } from '../queue/job.ts';
import { refreshProductMetrics } from './metrics.ts';
import { refreshProductMetricsJob } from './refresh-metrics.job.ts';

export const refreshProductMetricsHandler = defineJobHandler(refreshProductMetricsJob, {
  async run(deps) {
    const result = await refreshProductMetrics(deps.db);
    deps.logger.info({ products: result.products }, 'refreshed product metrics');
    return { products: result.products, asOf: result.asOf.toISOString() };
  },
});
