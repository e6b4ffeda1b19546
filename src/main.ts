// The quick-start (`npm start`): migrate, then the web server and every worker group in one process.
import { boot } from './process/boot.ts';
import { jobHandlers } from './process/jobs.ts';
import { startHttpServer } from './http/server.ts';
import { onShutdown } from './process/shutdown.ts';
import { WORKER_GROUPS } from './queue/job.ts';
import { registerWorkers } from './queue/workers.ts';
import { closeSharedBrowser } from './invoices/pdf/shared-browser.ts';

const { deps, boss, database, config } = await boot('billing', { release: true, supervise: true });
const stopBackground = await registerWorkers(boss, deps, WORKER_GROUPS, jobHandlers);
const server = await startHttpServer(deps, config.PORT, config.HOST);
onShutdown(deps.logger, [server.close, stopBackground, () => boss.stop({ graceful: true, timeout: 30_000 }), closeSharedBrowser, database.close]);
