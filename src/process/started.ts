import type { Logger } from 'pino';
import type { Config } from '../config.ts';

/** Where to point a browser: `localhost` when the server listens on every interface. */
function browserHost(host: string): string {
  return host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}

/** The database as a log line may show it: the embedded server's folder, or the URL without its password. */
export function describeDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'PGDATA_DIR' | 'EMBEDDED_PG_PORT'>,
  url: string,
): string {
  if (!config.DATABASE_URL) return `embedded PostgreSQL in ${config.PGDATA_DIR} (port ${config.EMBEDDED_PG_PORT})`;
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString().replace(/:@/, '@');
  } catch {
    return 'DATABASE_URL';
  }
}

/** The start-up line a newcomer reads (D-93, issue 19): where the console and the docs are, which database. */
export function logStartedService(
  logger: Logger,
  config: Config,
  databaseUrl: string,
  port: number,
  workerGroups: readonly string[],
): void {
  const base = `http://${browserHost(config.HOST)}:${port}`;
  const database = describeDatabase(config, databaseUrl);
  logger.info(
    { console: `${base}/admin`, docs: `${base}/docs`, database, workers: workerGroups },
    `ready: console ${base}/admin, API docs ${base}/docs, database ${database}`,
  );
}
