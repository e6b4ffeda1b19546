import type { Knex } from 'knex';
import type { Db } from './knex.ts';

interface PgConnection {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * One statement straight on a pooled pg connection, for the hottest reads (license checks, session
 * and key lookups): knex's query runner costs about as much CPU as the query itself there. `sql`
 * uses pg's `$1` placeholders, each once and in order. Inside a transaction it runs on that
 * transaction through knex, so callers need not care.
 */
export async function fastQuery<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  if ((db as Knex.Transaction).isTransaction) {
    const result = await db.raw(sql.replace(/\$\d+/g, '?'), params as Knex.RawBinding[]);
    return result.rows as T[];
  }
  const client = (db as Knex).client as { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<void> | void };
  const connection = await client.acquireConnection();
  try {
    return (await connection.query(sql, params)).rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}
