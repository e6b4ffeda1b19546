/**
 * Waiting for the condition that proves some work is done, instead of sleeping and hoping: a test that asserts
 * that nothing (else) happened first waits for what shows the work that could have done it has finished.
 */
import type { Knex } from 'knex';

/** Reads until `done` holds or `ms` pass; answers the last value read (the caller asserts on it). */
export async function waitFor<T>(read: () => Promise<T> | T, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

/** The server process id of the connection `db` runs on (a transaction's, for `waitUntilBlocked`). */
export async function backendPid(db: Knex | Knex.Transaction): Promise<number> {
  return Number((await db.raw('select pg_backend_pid() as pid')).rows[0].pid);
}

/**
 * Waits until some session of `db`'s database is blocked on a lock (one that the session `holderPid` holds, when
 * given) and answers their pids: the proof that a statement has reached the lock and waits there. Only this
 * database's sessions count: the other test files' databases are on the same server.
 */
export async function waitUntilBlocked(db: Knex, holderPid?: number, ms = 20_000): Promise<number[]> {
  const blocked = await waitFor(
    async () =>
      (
        await db.raw(
          `select pid from pg_stat_activity
            where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0
              and (?::int is null or ?::int = any(pg_blocking_pids(pid)))`,
          [holderPid ?? null, holderPid ?? null],
        )
      ).rows.map((r: { pid: number }) => Number(r.pid)) as number[],
    (pids) => pids.length > 0,
    ms,
  );
  if (blocked.length === 0) throw new Error(`no session was blocked on a lock within ${ms} ms`);
  return blocked;
}

/**
 * Waits until every pg-boss job named `name` (whose data contains `data`, when given) has finished: none is
 * still created, waiting for a retry or active. Throws when some are still to run after `ms`.
 */
export async function waitForJobsFinished(
  db: Knex,
  name: string,
  data: Record<string, unknown> = {},
  ms = 20_000,
): Promise<void> {
  const unfinished = await waitFor(
    async () =>
      Number(
        (
          await db.raw(
            `select count(*)::int as n from pgboss.job
              where name = ? and data @> ?::jsonb and state in ('created', 'retry', 'active')`,
            [name, JSON.stringify(data)],
          )
        ).rows[0].n,
      ),
    (n) => n === 0,
    ms,
  );
  if (unfinished > 0) throw new Error(`${unfinished} ${name} jobs still to run after ${ms} ms`);
}
