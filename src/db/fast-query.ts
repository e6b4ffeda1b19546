import type { Knex } from 'knex';
import pg from 'pg';
import type { Db } from './knex.ts';

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
  const gate = (db as { [GATE]?: FirstStatementGate })[GATE];
  if (gate) {
    if (gate.settled) return fastQuery<T>(gate.db, sql, params, name);
    const fused = gate.fuse(sql, params);
    return gate.accept(
      await fastQuery<Record<string, unknown>>(gate.db, fused.sql, fused.params, name && `${name}+gate`),
    ) as T[];
  }
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

const GATE = Symbol('first statement gate');

/**
 * A check that rides in the first statement of a request instead of a round trip of its own (the admin
 * session of a GET that reads one row, or of a write that is one statement: auth/service.ts adminSessionGate).
 * `fuse` wraps a read so it runs only when the check passes and answers the check's columns beside its rows.
 * `accept` reads the check's columns (throwing when the
 * check fails), marks the gate settled and answers the statement's own rows. `settle` looks the check up by a
 * statement of its own when no statement carried it (the request failed before one, or does other work first).
 */
export interface FirstStatementGate {
  db: Db;
  settled: boolean;
  fuse(sql: string, params: unknown[]): { sql: string; params: unknown[] };
  accept(rows: Record<string, unknown>[]): Record<string, unknown>[];
  /** The user the check admitted (throws as `accept` does). */
  settle(): Promise<{ user_id: string; email: string }>;
}

/** The gate `db` carries, when its check has not run yet. */
export function pendingGateOf(db: Db): FirstStatementGate | undefined {
  const gate = (db as { [GATE]?: FirstStatementGate })[GATE];
  return gate && !gate.settled ? gate : undefined;
}

/**
 * `db` carrying `gate`: fastQuery fuses its first statement with the gate's check; anything else (knex's
 * builder, a transaction) is refused until the gate is settled, so no statement runs before the check does.
 */
export function gatedDb(gate: FirstStatementGate): Db {
  return new Proxy(gate.db, {
    get(target, property) {
      if (property === GATE) return gate;
      // Not a statement: a caller asking whether it holds a transaction (it does not).
      if (property === 'isTransaction') return undefined;
      if (!gate.settled)
        throw new Error(
          `db.${String(property)} before the request's first statement checked its credentials: only fastQuery may run first here`,
        );
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    apply(target, self, args) {
      if (!gate.settled)
        throw new Error(
          "knex's builder before the request's first statement checked its credentials: only fastQuery may run first here",
        );
      return Reflect.apply(target, self, args);
    },
  });
}
