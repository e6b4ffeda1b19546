import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface LifecycleRunRow {
  id: string;
  status: RunStatus;
  job_id: string | null;
  as_of: Date | null;
  summary: Record<string, unknown> | null;
  error: string | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  heartbeat_at: Date | null;
  finished_at: Date | null;
}

/**
 * Opens a run unless one is open already (then undefined): the partial unique index decides between
 * concurrent callers, the loser's insert waits for the winner's commit and then does nothing.
 */
export async function insertOpenRunRow(
  db: Db,
  row: { id: string; status: 'queued' | 'running'; jobId: string | null; asOf: Date | null },
): Promise<LifecycleRunRow | undefined> {
  const running = row.status === 'running';
  // No conflict target: the only other unique key is the random primary key.
  const result = await db.raw<{ rows: LifecycleRunRow[] }>(
    `insert into lifecycle_runs (id, status, job_id, as_of, started_at, heartbeat_at, attempts)
     values (?, ?, ?, ${running ? 'coalesce(?, now()), now(), now(), 1' : '?, null, null, 0'})
     on conflict do nothing
     returning *`,
    [row.id, row.status, row.jobId, row.asOf],
  );
  return result.rows[0];
}

export async function findOpenRunRow(db: Db): Promise<LifecycleRunRow | undefined> {
  return db('lifecycle_runs').whereIn('status', ['queued', 'running']).first();
}

export async function findRunRow(db: Db, id: string): Promise<LifecycleRunRow | undefined> {
  return db('lifecycle_runs').where({ id }).first();
}

/**
 * Starts (or, after a crash, resumes) a run for `jobId`: queued -> running, or running again when the
 * same job is retried. Fixes `as_of` at the first start, so a resumed run sweeps as of the same instant.
 * Undefined when the run is closed or another process took it over.
 */
export async function startRunRow(db: Db, id: string, jobId: string | null): Promise<LifecycleRunRow | undefined> {
  const [row] = await db('lifecycle_runs')
    .where({ id })
    .where((q) => {
      q.where({ status: 'queued' });
      if (jobId) q.orWhere({ status: 'running', job_id: jobId });
    })
    .update({
      status: 'running',
      job_id: jobId,
      as_of: db.raw('coalesce(as_of, now())'),
      started_at: db.raw('coalesce(started_at, now())'),
      heartbeat_at: db.fn.now(),
      attempts: db.raw('attempts + 1'),
    })
    .returning('*');
  return row as LifecycleRunRow | undefined;
}

export async function heartbeatRunRow(db: Db, id: string): Promise<void> {
  await db('lifecycle_runs').where({ id, status: 'running' }).update({ heartbeat_at: db.fn.now() });
}

export async function finishRunRow(
  db: Db,
  id: string,
  outcome: { status: 'succeeded'; summary: Record<string, unknown> } | { status: 'failed'; error: string },
): Promise<void> {
  await db('lifecycle_runs')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({
      status: outcome.status,
      summary: 'summary' in outcome ? JSON.stringify(outcome.summary) : null,
      error: 'error' in outcome ? outcome.error : null,
      finished_at: db.fn.now(),
    });
}

/**
 * Closes a running run whose process stopped sending heartbeats `staleSeconds` ago (it was killed and its
 * job will not come back), so the next request opens a new one. Answers whether one was closed.
 */
export async function abandonStaleRunRow(db: Db, staleSeconds: number): Promise<boolean> {
  const count = await db('lifecycle_runs')
    .where({ status: 'running' })
    .where('heartbeat_at', '<', db.raw(`now() - make_interval(secs => ?)`, [staleSeconds]))
    .update({ status: 'failed', error: 'abandoned: no heartbeat', finished_at: db.fn.now() });
  return count > 0;
}

/** Runs newest first by cursor (the console's list; index lifecycle_runs_created). */
export function listRunRows(db: Db, page: PageQuery): Promise<Page<LifecycleRunRow>> {
  return paginate<LifecycleRunRow>(db('lifecycle_runs').select('*'), 'lifecycle_runs', { ...page, newestFirst: true });
}
