import { createHash } from 'node:crypto';
import { fromKnex } from 'pg-boss';
import type { SendOptions } from 'pg-boss';
import type { z } from 'zod';
import { fastQuery } from '../db/fast-query.ts';
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

/** A data-modifying statement (`insert ... returning ...`) with its own `$1..$n` parameters. */
export interface GateStatement {
  text: string;
  values: unknown[];
}

/**
 * pg-boss's own insert of one job (what `send` would run: its options, queue policy and notify), captured
 * instead of run, so it can become part of another statement.
 */
async function capturedSend(name: string, data: object): Promise<GateStatement> {
  let captured: GateStatement | undefined;
  const capture = {
    async executeSql(text: string, values: unknown[]) {
      captured = { text, values };
      // One row answers `send` at its first try (no retry of a debounced slot: none is asked for here).
      return { rows: [{ id: null }] };
    },
  };
  await getBoss().send(name, data, { db: capture });
  if (captured?.values.length !== 1)
    throw new Error(`pg-boss's insert of ${name} is not one statement with one parameter`);
  return captured;
}

const JOB_SOURCE = '$1::text::json';

/**
 * One statement that runs `gate` (a data-modifying statement returning at most one row, such as an insert
 * `on conflict do nothing returning id`) and, only when it yields a row, pg-boss's insert of a job of
 * `definition`: one round trip where a transaction of begin, insert, send and commit took four, and as
 * atomic (one statement commits whole or not at all). pg-boss's SQL is used as pg-boss writes it (options,
 * queue policy, the notify of a queue that asks for it); the only change is that its job rows come from
 * `(select <jobs> from gate)`, so no gate row means no job. Answers the gate's row with the job's id as
 * `job_id` (null when pg-boss skipped it, as `send` answers null), or undefined when the gate yielded none.
 * Inside a transaction it runs on it; otherwise alone, as a prepared statement.
 */
export async function enqueueWhen<Row = Record<string, unknown>, S extends z.ZodType = z.ZodType>(
  db: Db,
  gate: GateStatement,
  definition: JobDefinition<S>,
  payload: z.input<S>,
): Promise<(Row & { job_id: string | null }) | undefined> {
  const data = definition.payload.parse(payload) as object;
  const job = await capturedSend(definition.name, data);
  const { text, name } = gatedText(gate.text, gate.values.length + 1, job.text, definition.name);
  const [row] = await fastQuery<Row & { job_id: string | null }>(db, text, [...gate.values, ...job.values], name);
  return row;
}

const gatedTexts = new Map<string, { text: string; name: string }>();

/** The combined statement's text; pg-boss's text and the gate's are fixed per queue, so it is built once. */
function gatedText(gateText: string, jobParam: number, jobText: string, queue: string): { text: string; name: string } {
  const key = `${gateText}\u0000${jobParam}\u0000${jobText}`;
  const known = gatedTexts.get(key);
  if (known) return known;
  const parts = jobText.split(JOB_SOURCE);
  if (parts.length !== 2) throw new Error(`pg-boss's insert of ${queue} does not read its jobs from ${JOB_SOURCE}`);
  const insert = parts.join(`(select $${jobParam}::text::json from gate)`);
  // A notifying queue's insert is `WITH ins AS (...), notified AS (...) SELECT id FROM ins WHERE ...`: data-modifying
  // CTEs must be at the top level, so its CTEs join ours and its final select becomes the `job` CTE, which the
  // answer reads (an unread select CTE would never run, and the notify with it).
  const notifying = /^\s*WITH\s+([\s\S]*\))\s*(SELECT id FROM ins\b[\s\S]*)$/.exec(insert);
  const ctes = notifying ? `${notifying[1]}, job AS (${notifying[2]})` : `job AS (${insert})`;
  const text = `WITH gate AS (${gateText}), ${ctes} SELECT gate.*, (SELECT id FROM job LIMIT 1) AS job_id FROM gate`;
  const built = { text, name: `gated_${createHash('sha1').update(text).digest('hex').slice(0, 16)}` };
  gatedTexts.set(key, built);
  return built;
}
