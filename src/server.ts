// The web process (Procfile `web`): HTTP only; the release step has migrated.
import { boot } from './process/boot.ts';
import { startHttpServer } from './http/server.ts';
import { onShutdown } from './process/shutdown.ts';

const { deps, boss, database, config } = await boot('web', { release: false, supervise: false });
const server = await startHttpServer(deps, config.PORT, config.HOST);
onShutdown(deps.logger, [server.close, () => boss.stop({ graceful: true, timeout: 10_000 }), database.close]);
