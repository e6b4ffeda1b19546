import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export const migrationConfig: Knex.MigratorConfig = {
  directory: migrationsDir,
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

export async function migrateLatest(knex: Knex): Promise<void> {
  await knex.migrate.latest(migrationConfig);
}

/** True when every migration file has been applied (readiness checks this). */
export async function migrationsCurrent(knex: Knex): Promise<boolean> {
  const [, pending] = (await knex.migrate.list(migrationConfig)) as [unknown[], unknown[]];
  return pending.length === 0;
}
