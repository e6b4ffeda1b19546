import { fromKnex } from 'pg-boss';
import type { SendOptions } from 'pg-boss';
import type { z } from 'zod';
import type { Db } from '../db/knex.ts';
import { getBoss } from './boss.ts';
import type { JobDef } from './job.ts';

/**
 * Enqueues `job` on `db`: inside a transaction the job exists only if the transaction commits,
 * so a state change and the work it triggers can never come apart.
 */
export async function enqueue<S extends z.ZodType>(
  db: Db,
  job: JobDef<S>,
  payload: z.input<S>,
  options: SendOptions = {},
): Promise<string | null> {
  const data = job.payload.parse(payload) as object;
  return getBoss().send(job.name, data, { ...options, db: fromKnex(db) });
}
