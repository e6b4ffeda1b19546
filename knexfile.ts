// Used by the knex CLI (`npx knex migrate:status`); the service itself migrates through src/db/migrate.ts.
import { migrationConfig } from './src/db/migrate.ts';

export default {
  client: 'pg',
  connection: process.env.DATABASE_URL,
  migrations: migrationConfig,
};
