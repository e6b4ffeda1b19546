import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { parseTimestamptz } from './timestamptz.ts';

/** Anything a query can run on: the pool or an open transaction. Services take this first. */
export type Db = Knex | Knex.Transaction;

// NUMERIC stays a string end to end (money never becomes a JS number); int8 counts fit in a number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

/**
 * A pool of `poolMax` connections. `namedStatements: false` makes db/prepared.ts run its texts unnamed, for a
 * transaction-mode pooler that does not carry prepared statements between server connections.
 */
export function createKnex(connectionString: string, poolMax = 10, namedStatements = true): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: 'billing' },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
    // Read back by db/prepared.ts (knex keeps its config object as given, transactions included).
    namedStatements,
  } as Knex.Config);
}

/** Runs `work` in a transaction on `db`, or inside the caller's transaction when `db` already is one. */
export async function inTransaction<T>(db: Db, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((db as Knex.Transaction).isTransaction) return work(db as Knex.Transaction);
  return (db as Knex).transaction(work);
}
