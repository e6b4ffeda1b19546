import { newUuid } from '../crypto/ids.ts';
import type { Logger } from 'pino';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { enqueue } from '../queue/enqueue.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { abandonStaleRunRow, findOpenRunRow, insertOpenRunRow, listRunRows, type LifecycleRunRow } from './repo.ts';
import { waitForRun } from './runs.ts';
import { lifecycleSweepJob } from './sweep.job.ts';
import type { LifecycleSummary } from './sweep.ts';

/** A running run without a heartbeat this long was abandoned by a dead process (batches beat every second or so). */
export const STALE_RUN_SECONDS = 600;

/**
 * D-80: enqueues a sweep as of `asOf` (null: when it starts), or joins the one queued or running. The run
 * row and its job commit together; the partial unique index on open runs settles concurrent callers.
 * Each request is one `lifecycle.run` audit row (C-11) on the run it opened or joined, in that transaction.
 */
export async function requestLifecycleRun(
  db: Db,
  asOf: Date | null,
  actor: Actor,
): Promise<{ run: LifecycleRunRow; joined: boolean }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const outcome = await inTransaction(db, async (trx) => {
      await abandonStaleRunRow(trx, STALE_RUN_SECONDS);
      const id = newUuid();
      const created = await insertOpenRunRow(trx, { id, status: 'queued', jobId: id, asOf });
      if (created) await enqueue(trx, lifecycleSweepJob, { runId: id }, { id });
      const run = created ?? (await findOpenRunRow(trx));
      if (!run) return null;
      const joined = !created;
      await recordAudits(trx, actor, [
        {
          action: 'lifecycle.run',
          targetType: 'lifecycle_run',
          targetId: run.id,
          after: { status: run.status, asOf: run.as_of, joined },
        },
      ]);
      return { run, joined };
    });
    // null: the open run finished between the insert and the read; try again.
    if (outcome) return outcome;
  }
  throw new Error('could not open or join a lifecycle run');
}

/** D-81: moving time is for tests and staging; production always sweeps as of now. */
export function asOfHonoured(environment: Config['NODE_ENV']): boolean {
  return environment !== 'production';
}

export interface CronRequest {
  /** The `asOf` the caller asked for; null for now. */
  asOf: Date | null;
  /** NODE_ENV, which decides whether `asOf` counts (D-81). */
  environment: Config['NODE_ENV'];
  /** How long to wait for the sweep's summary; null to answer at once. */
  waitMs: number | null;
}

/** The run finished with its summary, or is still queued or running (also when waiting ran out). */
export type CronOutcome =
  | { kind: 'finished'; run: LifecycleRunRow; summary: LifecycleSummary }
  | { kind: 'pending'; run: LifecycleRunRow };

/**
 * The cron endpoint's and the console's "run now" use case: request (or join) a run and, with `waitMs`, wait for its
 * summary.
 */
export async function triggerLifecycle(
  db: Db,
  request: CronRequest,
  actor: Actor,
  logger?: Pick<Logger, 'warn'>,
): Promise<CronOutcome> {
  const asOf = asOfHonoured(request.environment) ? request.asOf : null;
  if (request.asOf && asOf === null) logger?.warn('cron lifecycle: body asOf ignored in production');
  const { run } = await requestLifecycleRun(db, asOf, actor);
  if (request.waitMs === null) return { kind: 'pending', run };
  const done = (await waitForRun(db, run.id, request.waitMs)) ?? run;
  if (done.status === 'succeeded')
    return { kind: 'finished', run: done, summary: done.summary as unknown as LifecycleSummary };
  if (done.status === 'failed') throw new AppError('lifecycle_run_failed', `Lifecycle run ${done.id} failed`);
  return { kind: 'pending', run: done };
}

/** Sweep runs newest first, for the console (C-4). */
export function listLifecycleRuns(db: Db, page: PageQuery): Promise<Page<LifecycleRunRow>> {
  return listRunRows(db, page);
}
