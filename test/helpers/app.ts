import type { Knex } from 'knex';
import type { DestinationStream } from 'pino';
import type { AppDeps } from '../../src/app-deps.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { startHttpServer } from '../../src/web/server.ts';
import { createLogger } from '../../src/logger.ts';
import { createBoss, setBoss, type Boss } from '../../src/queue/boss.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface TestApp {
  baseUrl: string;
  db: Knex;
  database: TestDatabase;
  boss: Boss;
  deps: AppDeps;
  close(): Promise<void>;
}

/**
 * The real app on a loopback port, on a database of its own, with a started queue client.
 * `logDestination` receives the log lines (with LOG_LEVEL in `env`), for tests of what gets logged.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { logDestination?: DestinationStream } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config: Config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: database.url,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...env,
  });
  const logger = createLogger(config, 'test', options.logDestination);
  const boss = createBoss(database.url, logger, { migrate: false, supervise: false, max: 3 });
  await boss.start();
  setBoss(boss);
  const deps: AppDeps = { db: database.knex, config, logger };
  const server = await startHttpServer(deps, 0, '127.0.0.1');
  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    db: database.knex,
    database,
    boss,
    deps,
    async close() {
      await server.close();
      await boss.stop({ graceful: false });
      await database.drop();
    },
  };
}
