import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ensureDatabase, startEmbeddedPostgres } from './embedded.ts';
import { createKnex } from './knex.ts';
import { assertReachable } from './reachable.ts';

export interface OpenDatabase {
  url: string;
  knex: Knex;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set (refused with one line when it cannot be reached, D-93); otherwise an embedded
 * PostgreSQL in PGDATA_DIR, started, or joined when running unless `exclusive` (a serving process).
 */
export async function openDatabase(
  config: Config,
  logger: Logger,
  options: { exclusive?: boolean } = {},
): Promise<OpenDatabase> {
  let url = config.DATABASE_URL;
  let stopServer = async () => {};
  if (!url) {
    logger.info({ dataDir: config.PGDATA_DIR, port: config.EMBEDDED_PG_PORT }, 'starting embedded PostgreSQL');
    const server = await startEmbeddedPostgres({
      dataDir: config.PGDATA_DIR,
      port: config.EMBEDDED_PG_PORT,
      exclusive: options.exclusive,
      log: (m) => logger.debug({ postgres: m.trim() }, 'postgres'),
    });
    url = await ensureDatabase(server.adminUrl, 'billing');
    stopServer = server.stop;
  } else {
    await assertReachable(url);
  }
  const knex = createKnex(url, config.DB_POOL_MAX, config.DB_NAMED_STATEMENTS);
  return {
    url,
    knex,
    async close() {
      await knex.destroy();
      await stopServer();
    },
  };
}
