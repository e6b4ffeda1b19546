import { createHash } from 'node:crypto';
import { fromKnex } from 'pg-boss';
import type { SendOptions } from 'pg-boss';
import type { z } from 'zod';
import type { RawConnection } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { getBoss } from './boss.ts';
import type { JobDefinition } from './job.ts';

/**
 * Enqueues a job of `definition` on `db`: inside a transaction the job exists only if the transaction commits,
 * so a state change and the work it triggers can never come apart.
 */
export async function enqueue<S extends z.ZodType>(
  db: Db,
  definition: JobDefinition<S>,
  payload: z.input<S>,
  options: SendOptions = {},
): Promise<string | null> {
  const data = definition.payload.parse(payload) as object;
  return getBoss().send(definition.name, data, { ...options, db: fromKnex(db) });
}

/**
 * Enqueues a job of `definition` on a raw connection inside its transaction (see rawTransaction), with pg-boss's insert
 * as a named prepared statement: planned once per connection instead of on every call, which is most of
 * what an enqueue costs on a hot path.
 */
export async function enqueueOnConnection<S extends z.ZodType>(connection: RawConnection, definition: JobDefinition<S>, payload: z.input<S>): Promise<string | null> {
  const data = definition.payload.parse(payload) as object;
  const adapter = {
    async executeSql(text: string, values: unknown[]) {
      const name = `boss_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
      return connection.query({ name, text, values });
    },
  };
  return getBoss().send(definition.name, data, { db: adapter });
}
