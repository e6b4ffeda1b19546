import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from './config.ts';

/** What the web app and the workers are built from; tests build one per database. */
export interface AppDeps {
  db: Knex;
  config: Config;
  logger: Logger;
}
