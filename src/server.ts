// The web process (Procfile `web`): HTTP only; the release step has migrated.
import { boot } from './process/boot.ts';
import { startHttpServer } from './web/server.ts';
import { runProcess } from './process/run.ts';
import { logStartedService } from './process/started.ts';

await runProcess('web', async (opened) => {
  const { deps, boss, database, config } = await boot(
    'web',
    { release: false, supervise: false, exclusive: true },
    opened,
  );
  opened.add(() => boss.stop({ graceful: true, timeout: 10_000 }));
  const server = await startHttpServer(deps, config.PORT, config.HOST);
  opened.add(server.close);
  logStartedService(deps.logger, config, database.url, server.port, []);
});
