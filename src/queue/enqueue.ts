import { createHash } from 'node:crypto';
import type { SendOptions } from 'pg-boss';
import type { z } from 'zod';
import type { Db } from '../db/knex.ts';
import { queryPrepared } from '../db/prepared.ts';
import { getBoss } from './boss.ts';
import type { JobDefinition } from './job.ts';

const statementNames = new Map<string, string>();

/** pg-boss's texts are fixed per queue; each gets a name of its own (a hash: the text holds the queue's name). */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `pg-boss.${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * pg-boss's statements on `db`, as prepared statements. Its job insert is a few kB of SQL that PostgreSQL parsed
 * and planned on every send through pg-boss's knex adapter: bench/cpu-per-request.ts on the provider_a webhook
 * (the volume path that enqueues) measured web / PostgreSQL CPU ms per request 0.91 / 1.04 through the adapter,
 * 0.89 / 0.69 prepared.
 */
function preparedOn(db: Db) {
  return {
    async executeSql(text: string, values: unknown[]) {
      return { rows: await queryPrepared(db, { name: statementName(text), text }, values) };
    },
  };
}

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
  return getBoss().send(definition.name, data, { ...options, db: preparedOn(db) });
}
