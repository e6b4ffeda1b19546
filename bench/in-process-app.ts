/**
 * The app in this process on a throw-away bench database, seeded and logged in as an admin: for the profiling
 * scripts that watch pg's Client in this process (round-trips.ts, profile/statement-times.ts).
 */
import { loadConfig } from '../src/config.ts';
import { createKnex } from '../src/db/knex.ts';
import { startHttpServer } from '../src/web/server.ts';
import { createLogger } from '../src/logger.ts';
import { createBoss, setBoss } from '../src/queue/boss.ts';
import { loginAsAdmin } from '../test/helpers/auth.ts';
import { seedRows } from './fixtures.ts';
import { onCleanup, startBenchDatabase } from './harness.ts';

export async function startInProcessApp(env: Record<string, string> = {}) {
  const url = await startBenchDatabase();
  const knex = createKnex(url, 10);
  onCleanup(() => knex.destroy());
  const rows = await seedRows(knex);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    DATABASE_URL: url,
    ...env,
  });
  const logger = createLogger(config, 'web');
  const boss = createBoss(url, logger, { migrate: false, supervise: false, max: 2 });
  await boss.start();
  onCleanup(() => boss.stop({ graceful: false }));
  setBoss(boss);
  const server = await startHttpServer({ db: knex, config, logger }, 0, '127.0.0.1');
  onCleanup(server.close);
  const base = `http://127.0.0.1:${server.port}`;
  const { cookie } = await loginAsAdmin(base, knex);
  return { url, knex, rows, base, cookie };
}
