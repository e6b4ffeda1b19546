import type { Knex } from 'knex';
import pg from 'pg';
import type { Db } from './knex.ts';
import type { LiteralValues } from './literal.ts';

/**
 * One statement straight on a pooled pg connection, for the hottest reads (license checks, session
 * and key lookups): knex's query runner costs about as much CPU as the query itself there. `sql`
 * uses pg's `$1` placeholders, each once and in order. Inside a transaction it runs on that
 * transaction through knex, so callers need not care. A `name` makes it a prepared statement on each
 * pooled connection, planned once there instead of on every call: for statements whose planning
 * costs more than running them. One name, one text; the result's columns must not depend on the
 * schema (`select *` would fail after a migration adds a column).
 */
export async function fastQuery<T>(db: Db, sql: string, params: unknown[], name?: string): Promise<T[]> {
  if ((db as Knex.Transaction).isTransaction) {
    const result = await db.raw(sql.replace(/\$\d+/g, '?'), params as Knex.RawBinding[]);
    return result.rows as T[];
  }
  const client = poolOf(db);
  const connection = await client.acquireConnection();
  try {
    return (await submit(connection as unknown as pg.Client, sql, params, name)) as T[];
  } finally {
    // knex's release is synchronous (its promise is already resolved): no await, no microtask of its own.
    void client.releaseConnection(connection);
  }
}

/**
 * pg's `query({ name, text, values })` copies the config object property by property (descriptors and all) before
 * it builds its Query: a few per cent of a hot read's CPU (issue 20, read paths). A Query built from the text (no
 * copy) with its name set after is the same statement, prepared on the connection the same way.
 */
function submit(connection: pg.Client, text: string, values: unknown[], name: string | undefined): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const query: pg.Query & { name?: string } = new pg.Query(text, values, (error, result) =>
      error ? reject(error) : resolve(result.rows),
    );
    if (name) query.name = name;
    connection.query(query);
  });
}

/** A pooled pg connection as pg hands it out: `query` takes a named (prepared) statement too. */
export interface RawConnection {
  /** Without `values` pg sends `text` by the simple protocol, which allows several statements (one result each). */
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: any[] }>;
}

/** Runs `work` on a pooled pg connection of `db` (not a transaction), given back after. */
export async function withRawConnection<T>(db: Db, work: (connection: RawConnection) => Promise<T>): Promise<T> {
  const client = poolOf(db);
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** knex's pool, whose connections are pg clients: taken and given back around raw statements. */
function poolOf(db: Db) {
  return (db as Knex).client as {
    acquireConnection(): Promise<RawConnection>;
    releaseConnection(c: RawConnection): Promise<void> | void;
  };
}

/*
 * What remains of the session check that rode in a request's first statement, for db/hot-lock.ts only until it
 * goes (branch core-write): the auth middleware now checks every admin session, so no request carries a gate.
 */

/** @deprecated No request carries a gate any more (see above). */
export interface FirstStatementGate {
  db: Db;
  settled: boolean;
  fuse(sql: string, params: unknown[]): { sql: string; params: unknown[] };
  accept(rows: Record<string, unknown>[]): Record<string, unknown>[];
  settle(): Promise<{ user_id: string; email: string }>;
  guard(values: LiteralValues): StatementGuard;
}

/** @deprecated See FirstStatementGate. */
export interface StatementGuard {
  ctes: string;
  admits: string;
  answer(finalSelect: string): string;
  user: { id: string; email: string };
}

/** @deprecated Always undefined: see FirstStatementGate. */
export function pendingGateOf(_db: Db): FirstStatementGate | undefined {
  return undefined;
}
