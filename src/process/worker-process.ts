import { boot } from './boot.ts';
import { jobHandlers } from './jobs.ts';
import { runProcess } from './run.ts';
import type { WorkerGroup } from '../queue/job.ts';
import { registerWorkers } from '../queue/workers.ts';
import { closeSharedBrowser } from '../invoices/pdf/shared-browser.ts';

/** A worker process for one group: registers its handlers; SIGTERM lets in-flight jobs finish, then exits. */
export async function runWorkerProcess(group: WorkerGroup): Promise<void> {
  await runProcess(`worker-${group}`, async (opened) => {
    const { deps, boss } = await boot(`worker-${group}`, { release: false, supervise: true }, opened);
    opened.add(closeSharedBrowser);
    opened.add(() => boss.stop({ graceful: true, timeout: 30_000 }));
    opened.add(await registerWorkers(boss, deps, [group], jobHandlers));
    deps.logger.info({ group }, 'worker started');
  });
}
