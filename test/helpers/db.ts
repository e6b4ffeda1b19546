import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import { createKnex } from '../../src/db/knex.ts';
import { databaseUrl } from './template.ts';

export interface TestDatabase {
  url: string;
  knex: Knex;
  drop(): Promise<void>;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with npm test`);
  return value;
}

/** A fresh database cloned from the migrated template; each test file gets its own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = env('TEST_ADMIN_URL');
  const template = env('TEST_TEMPLATE_DB');
  const name = `billing_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Cloning needs the template idle; two files cloning at once may briefly collide, so retry.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`);
      break;
    } catch (error) {
      if (attempt > 50 || (error as { code?: string }).code !== '55006') throw error;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  await admin.end();
  const url = databaseUrl(adminUrl, name);
  // scripts/pgbouncer-check.ts: the app's pool goes through a transaction-mode pooler, as DATABASE_URL would in
  // production; `url` (pg-boss, spawned processes) stays on the server itself, as DATABASE_SESSION_URL would.
  const pooler = process.env.TEST_POOLER_URL;
  const knex = createKnex(pooler ? databaseUrl(pooler, name) : url, 10, process.env.DB_NAMED_STATEMENTS !== 'false');
  return {
    url,
    knex,
    async drop() {
      await knex.destroy();
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      await client.end();
    },
  };
}
