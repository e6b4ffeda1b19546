import { newUuid } from '../crypto/ids.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
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

/**
 * D-81 as issue 33 hardened it: the sweep runs as of another time than now only where the operator allowed it
 * (LIFECYCLE_ALLOW_AS_OF=true: tests, staging), whatever NODE_ENV says; elsewhere the input that asks for it
 * (`field`) is refused, never silently ignored. Users move time with test clocks.
 */
export function refuseAsOfUnlessAllowed(allowed: boolean, field: string): void {
  if (allowed) return;
  const message = 'is refused: moving the lifecycle sweep through time needs LIFECYCLE_ALLOW_AS_OF=true';
  throw new AppError('invalid_request', `${field} ${message}`, { details: [{ path: field, message }] });
}

export interface CronRequest {
  /** The `asOf` the caller asked for; null for now. */
  asOf: Date | null;
  /** LIFECYCLE_ALLOW_AS_OF: whether an `asOf` may be asked for at all. */
  asOfAllowed: boolean;
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
export async function triggerLifecycle(db: Db, request: CronRequest, actor: Actor): Promise<CronOutcome> {
  if (request.asOf !== null) refuseAsOfUnlessAllowed(request.asOfAllowed, 'asOf');
  const { run } = await requestLifecycleRun(db, request.asOf, actor);
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
