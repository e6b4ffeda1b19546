import { boot } from './boot.ts';
import { jobHandlers } from './jobs.ts';
import { onShutdown } from './shutdown.ts';
import type { WorkerGroup } from '../queue/job.ts';
import { registerWorkers } from '../queue/workers.ts';
import { closeSharedBrowser } from '../invoices/pdf/shared-browser.ts';

/** A worker process for one group: registers its handlers; SIGTERM lets in-flight jobs finish, then exits. */
export async function runWorkerProcess(group: WorkerGroup): Promise<void> {
  const { deps, boss, database } = await boot(`worker-${group}`, { release: false, supervise: true });
  const stopBackground = await registerWorkers(boss, deps, [group], jobHandlers);
  deps.logger.info({ group }, 'worker started');
  onShutdown(deps.logger, [stopBackground, () => boss.stop({ graceful: true, timeout: 30_000 }), closeSharedBrowser, database.close]);
}
