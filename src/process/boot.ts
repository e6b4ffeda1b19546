import type { AppDeps } from '../app-deps.ts';
import { ensureFirstAdmin } from '../auth/first-admin.ts';
import { loadConfig, productionProblems, type Config } from '../config.ts';
import { migrateLatest } from '../db/migrate.ts';
import { openDatabase, type OpenDatabase } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { warnUnconfiguredProviders } from '../providers/configured.ts';
import { createBoss, createQueues, setBoss, type Boss } from '../queue/boss.ts';
import { assertSettingOverridesValid } from '../settings/service.ts';
import { jobDefinitions } from './jobs.ts';
import type { Opened } from './run.ts';
import { sealSecretsAtRest } from './seal-secrets.ts';

export interface Booted {
  config: Config;
  database: OpenDatabase;
  boss: Boss;
  deps: AppDeps;
}

/**
 * Opens the database and the queue for one process. `release` migrates the schema, pg-boss and
 * the queues and creates the first admin and the license signing key; processes started without it expect that done.
 * With `opened` (a process run by `runProcess`), the database is closed again on shutdown or when a later step fails.
 * `exclusive`: a serving process refuses an embedded data folder another live instance owns (D-93).
 */
export async function boot(
  name: string,
  options: { release: boolean; supervise: boolean; exclusive?: boolean },
  opened?: Opened,
): Promise<Booted> {
  const config = loadConfig();
  // Issue 33: production does not start with what only development may lack (an encryption key for secrets at rest).
  const missing = productionProblems(config);
  if (missing.length > 0) throw new AppError('setup_failed', missing.join('; '));
  // Environment overrides of settings are configuration too: a bad one stops the process (D-9).
  assertSettingOverridesValid(config);
  const logger = createLogger(config, name);
  if (opened) opened.logger = logger;
  warnUnconfiguredProviders(config, logger);
  const database = await openDatabase(config, logger, { exclusive: options.exclusive });
  opened?.add(database.close);
  if (options.release) await migrateLatest(database.knex);
  // pg-boss LISTENs and holds its own pool: behind a transaction-mode pooler it needs a session (docs/operations.md).
  const boss = createBoss(config.DATABASE_SESSION_URL ?? database.url, logger, {
    migrate: options.release,
    supervise: options.supervise,
  });
  await boss.start();
  if (options.release) await createQueues(boss, jobDefinitions, config);
  setBoss(boss);
  const deps: AppDeps = { db: database.knex, config, logger };
  if (options.release) {
    await ensureFirstAdmin(deps);
    // D-100 and issue 33: the license signing key exists, and every secret at rest is sealed with the first
    // ENCRYPTION_KEY, before anything serves.
    await sealSecretsAtRest(deps);
  }
  return { config, database, boss, deps };
}
