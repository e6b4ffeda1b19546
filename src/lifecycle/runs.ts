import { newUuid } from '../crypto/ids.ts';
import type { AppDeps } from '../app-deps.ts';
import type { Db } from '../db/knex.ts';
import {
  findOpenRunRow,
  findRunRow,
  finishRunRow,
  heartbeatRunRow,
  insertOpenRunRow,
  startRunRow,
  type LifecycleRunRow,
} from './repo.ts';
import { runLifecycleSweep, type LifecycleSummary, type SweepOptions } from './sweep.ts';

/**
 * A run's heartbeat is written at most this often: a renewal batch ends many times a second, staleness is judged in
 * minutes.
 */
const HEARTBEAT_MS = 1000;

/** `beat` when at least `ms` passed since the last one; otherwise nothing. */
function atMostEvery(ms: number, beat: () => Promise<void>): () => Promise<void> {
  let last = 0;
  return async () => {
    const now = Date.now();
    if (now - last < ms) return;
    last = now;
    await beat();
  };
}

/**
 * Runs (or resumes) run `runId` in this process for pg-boss job `jobId` (null: no job, npm run lifecycle).
 * Answers null when the run is closed or another process owns it: nothing to do.
 */
export async function executeRun(
  deps: AppDeps,
  runId: string,
  jobId: string | null,
  options: SweepOptions = {},
): Promise<LifecycleSummary | null> {
  const run = await startRunRow(deps.db, runId, jobId);
  if (!run) {
    deps.logger.info({ runId, jobId }, 'lifecycle run already finished or taken over; nothing to do');
    return null;
  }
  if (run.attempts > 1)
    deps.logger.warn({ runId, attempt: run.attempts, asOf: run.as_of }, 'resuming an interrupted lifecycle run');
  const summary = await runLifecycleSweep(deps, run.as_of!, {
    ...options,
    heartbeat: atMostEvery(HEARTBEAT_MS, () => heartbeatRunRow(deps.db, runId)),
  });
  await finishRunRow(deps.db, runId, { status: 'succeeded', summary: summary as unknown as Record<string, unknown> });
  return summary;
}

export async function failRun(db: Db, runId: string, error: unknown): Promise<void> {
  await finishRunRow(db, runId, { status: 'failed', error: error instanceof Error ? error.message : String(error) });
}

/** Polls the run until it finishes or `timeoutMs` pass; answers the row as last read. */
export async function waitForRun(
  db: Db,
  runId: string,
  timeoutMs: number,
  pollMs = 200,
): Promise<LifecycleRunRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await findRunRow(db, runId);
    if (!run || run.status === 'succeeded' || run.status === 'failed' || Date.now() >= deadline) return run;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
  }
}

/**
 * `npm run lifecycle`: one sweep in this process, needing no worker. Opens a run; when one is open already,
 * takes over a queued one (its job then finds it taken and does nothing) or waits for a running one.
 */
export async function runLifecycleInProcess(
  deps: AppDeps,
  asOf: Date | null,
  waitMs = 30 * 60_000,
): Promise<LifecycleRunRow | undefined> {
  const id = newUuid();
  if (await insertOpenRunRow(deps.db, { id, status: 'queued', jobId: null, asOf })) {
    await runOwned(deps, id);
    return findRunRow(deps.db, id);
  }
  const open = await findOpenRunRow(deps.db);
  if (open?.status === 'queued' && (await runOwned(deps, open.id))) return findRunRow(deps.db, open.id);
  if (open) {
    deps.logger.info({ runId: open.id }, 'a lifecycle run is in progress; waiting for it');
    return waitForRun(deps.db, open.id, waitMs, 1000);
  }
  // The open run finished between the two reads: start afresh.
  return runLifecycleInProcess(deps, asOf, waitMs);
}

async function runOwned(deps: AppDeps, runId: string): Promise<boolean> {
  try {
    return (await executeRun(deps, runId, null)) !== null;
  } catch (error) {
    await failRun(deps.db, runId, error);
    throw error;
  }
}
