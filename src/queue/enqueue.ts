import { fromKnex } from 'pg-boss';
import type { SendOptions } from 'pg-boss';
import type { z } from 'zod';
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
