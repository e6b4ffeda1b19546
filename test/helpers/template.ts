import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { createKnex } from '../../src/db/knex.ts';
import { migrateLatest } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/logger.ts';
import { jobDefinitions } from '../../src/process/jobs.ts';
import { createBoss, createQueues } from '../../src/queue/boss.ts';

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates `name` with the service's schema, pg-boss's schema and every queue, to be cloned per test file. */
export async function prepareTemplate(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await admin.query(`create database ${pg.escapeIdentifier(name)}`);
  await admin.end();

  const url = databaseUrl(adminUrl, name);
  const knex = createKnex(url, 2);
  await migrateLatest(knex);
  await knex.destroy();
  const boss = createBoss(url, createLogger({ LOG_LEVEL: 'silent' }), { migrate: true, supervise: false, max: 2 });
  await boss.start();
  await createQueues(boss, jobDefinitions, loadConfig());
  await boss.stop({ graceful: false });
}
