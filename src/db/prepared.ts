import type { Knex } from 'knex';
import type { Db } from './knex.ts';

/** A statement by a fixed, parameterised text (pg's `$1` placeholders), prepared under `name` on each connection. */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** A pooled pg connection (for a transaction, knex's transaction client hands out the transaction's own). */
interface PgConnection {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** What createKnex records on the pool's config; a transaction's client shares its pool's config. */
interface PreparedConfig {
  /** False behind a transaction-mode pooler that does not track protocol-level prepared statements. */
  namedStatements?: boolean;
}

/**
 * Runs `statement` as a named prepared statement on a connection of `db`: planned once per connection, and without
 * knex's builder and query runner. Only for statements whose path missed its bench aim through knex, after profiling;
 * the text names its columns (a prepared statement whose result columns a migration changes is refused by
 * PostgreSQL, one whose columns stay the same is replanned).
 *
 * Used by the admin session lookup (every admin request), GET /api/products/:id, license verify, validate and
 * checkout, pg-boss's job insert (queue/enqueue.ts: its statement is a few kB of SQL, planned on every send), the v1
 * API key check, usage ingestion's batch statement (5.7 ms to plan, issue 35; one text per window of probed months)
 * and its read of the customer's subscriptions, and the usage read's aggregates.
 * With `DB_NAMED_STATEMENTS=false` (an old transaction-mode pooler) the same texts run unnamed.
 * Measured with bench/cpu-per-request.ts (4,000 requests at 32 connections, web / PostgreSQL CPU ms per request,
 * the same run's raw ceiling in brackets; load 7-12 from other work on the machine):
 *   GET product     knex 0.647 / 0.398 [0.242 / 0.145] -> prepared 0.445 / 0.177 [0.300 / 0.180]
 *                   (the same text unprepared, without knex: 0.502 / 0.463: planning the session join is the cost)
 *   verify          knex 0.583 / 0.258 [0.335 / 0.193] -> prepared 0.343 / 0.105 [0.245 / 0.160]
 *   validate, known knex 0.705 / 1.735 [0.512 / 0.542] -> prepared 0.278 / 0.362 [0.445 / 0.497]
 *   validate, new   knex 0.525 / 1.555 [0.512 / 0.542] -> prepared 0.260 / 0.492 [0.445 / 0.497]
 *   checkout        knex 0.570 / 0.383 [0.270 / 0.145] -> prepared 0.565 / 0.155 [0.253 / 0.152]
 * and `BENCH_SECONDS=5 npx tsx bench/run.ts` ratios: verify 0.19-0.80 -> 0.73-0.85 of the select ceiling (aim
 * 0.75), validate of a known device 0.48 -> 1.03-1.25 of the write ceiling (aim 0.6), checkout 0.18-0.28 -> 0.48-0.80
 * of the select ceiling (aim 0.5). The heartbeat met its aim as a knex query and stays one.
 */
export async function queryPrepared<T>(db: Db, statement: PreparedStatement, values: unknown[]): Promise<T[]> {
  const client = (db as Knex).client as {
    config: PreparedConfig;
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(connection: PgConnection): Promise<void> | void;
  };
  // Unnamed, the text is parsed and planned on every call, as knex's queries are: what an old pooler can run.
  const name = client.config.namedStatements === false ? undefined : statement.name;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text: statement.text, values })).rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}
