import type { AppDeps } from '../app-deps.ts';
import type { Boss } from './boss.ts';
import type { WorkerGroup } from './job.ts';
import { jobRegistry } from './registry.ts';

/** Registers the handlers of every job in `groups` on `boss`. */
export async function registerWorkers(boss: Boss, deps: AppDeps, groups: readonly WorkerGroup[]): Promise<void> {
  for (const job of jobRegistry.filter((j) => groups.includes(j.group))) {
    await boss.work(
      job.name,
      { localConcurrency: job.concurrency, batchSize: 1, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 5 },
      async ([item]) => {
        if (!item) return;
        const log = deps.logger.child({ job: job.name, jobId: item.id });
        const payload = job.payload.parse(item.data);
        try {
          return await job.run({ ...deps, logger: log }, payload, { jobId: item.id, retryCount: (item as { retryCount?: number }).retryCount ?? 0 });
        } catch (err) {
          log.error({ err }, 'job failed');
          throw err;
        }
      },
    );
  }
}
