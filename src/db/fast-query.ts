import type { Knex } from 'knex';
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
  if ((db as Knex.Transaction).isTransaction) {
    const result = await db.raw(sql.replace(/\$\d+/g, '?'), params as Knex.RawBinding[]);
    return result.rows as T[];
  }
  const client = poolOf(db);
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text: sql, values: params })).rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}

/** A pooled pg connection as pg hands it out: `query` takes a named (prepared) statement too. */
export interface RawConnection {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: any[] }>;
}

/** knex's pool, whose connections are pg clients: taken and given back around raw statements. */
function poolOf(db: Db) {
  return (db as Knex).client as { acquireConnection(): Promise<RawConnection>; releaseConnection(c: RawConnection): Promise<void> | void };
}
