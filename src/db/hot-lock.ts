import type { Knex } from 'knex';
import { fastQuery } from './fast-query.ts';
import type { Db } from './knex.ts';

/**
 * A transaction around a hot lock: one that every transaction of its kind queues on until commit (the year's
 * invoice-number counter, D-50). With a synchronous commit, PostgreSQL releases a transaction's locks only
 * after its commit record is flushed to disk, so the disk's flush time (about 4 ms on the benchmark machine)
 * would be paid one creation after another. This transaction commits with `synchronous_commit` off: its locks
 * are released, and its rows visible, as soon as its commit record is in the WAL; then, outside any lock, it
 * waits until the WAL is flushed past that record before answering, so what the caller answers is as durable
 * as after a synchronous commit (and concurrent waits share one flush).
 *
 * Why this is safe for gapless numbers: a transaction that takes the next number waited for this one's lock,
 * so its commit record comes later in the WAL, and WAL is flushed in order; a crash keeps a prefix of the
 * commits, never a later number without the earlier ones. What it trades: between the commit and the flush
 * (a few milliseconds) other sessions can read rows that a crash of the server in that instant would lose;
 * the workers act on them only after a synchronous commit of their own (claiming a delivery or a job), which
 * flushes the WAL past this commit first.
 *
 * Inside the caller's transaction (`db` is one) `work` simply runs in it: the caller's commit applies. On a
 * server older than PostgreSQL 17, which cannot be asked to flush, it is an ordinary transaction.
 */
export async function inHotLockTransaction<T>(db: Db, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((db as Knex.Transaction).isTransaction) return work(db as Knex.Transaction);
  if (!(await canWaitForFlush(db))) return (db as Knex).transaction(work);
  const result = await (db as Knex).transaction(async (trx) => {
    await trx.raw('set local synchronous_commit = off');
    return work(trx);
  });
  await waitForWalFlush(db);
  return result;
}

/**
 * Returns once the WAL is on disk up to now: a non-transactional logical message written with `flush`
 * (PostgreSQL 17+, any role may call it) forces the flush past everything committed before it.
 */
async function waitForWalFlush(db: Db): Promise<void> {
  await fastQuery(db, `select pg_logical_emit_message(false, 'billing.flush', '', true)`, [], 'billing_wal_flush');
}

const flushable = new WeakMap<object, Promise<boolean>>();

/** Whether the server can be asked to flush (PostgreSQL 17+): asked once per pool, again after a failed ask. */
function canWaitForFlush(db: Db): Promise<boolean> {
  let known = flushable.get(db);
  if (!known) {
    known = fastQuery<{ version: number }>(db, `select current_setting('server_version_num')::int as version`, []).then(([row]) => row!.version >= 170000);
    known.catch(() => flushable.delete(db));
    flushable.set(db, known);
  }
  return known;
}
