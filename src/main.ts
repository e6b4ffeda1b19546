// The quick-start (`npm start`): migrate, then the web server and every worker group in one process.
import { boot } from './process/boot.ts';
import { jobHandlers } from './process/jobs.ts';
import { startHttpServer } from './web/server.ts';
import { runProcess } from './process/run.ts';
import { WORKER_GROUPS } from './queue/job.ts';
import { registerWorkers } from './queue/workers.ts';
import { closeSharedBrowser } from './invoices/pdf/shared-browser.ts';
import { logStartedService } from './process/started.ts';

await runProcess('billing', async (opened) => {
  const { deps, boss, database, config } = await boot(
    'billing',
    { release: true, supervise: true, exclusive: true },
    opened,
  );
  opened.add(closeSharedBrowser);
  opened.add(() => boss.stop({ graceful: true, timeout: 30_000 }));
  opened.add(await registerWorkers(boss, deps, WORKER_GROUPS, jobHandlers));
  const server = await startHttpServer(deps, config.PORT, config.HOST);
  opened.add(server.close);
  logStartedService(deps.logger, config, database.url, server.port, WORKER_GROUPS);
});
