/**
 * TC-3: a test clock's advance replays, for the clock's customers only, every lifecycle step that falls due between
 * the clock's time and the new one, in time order and each at its own moment: the daily sweep's own steps
 * (lifecycle/sweep.ts runLifecycleSweep) run as of each moment with the clock's scope, so the clock's customers live
 * through exactly the code real customers do. After each moment the clock's `advance_cursor` records it; a retry after
 * a crash starts again at that moment (the steps are idempotent: periods invoiced once, an invoice moved overdue once,
 * a charge attempt sent under its idempotency key, an email once per occasion) and goes on from there.
 */
import type { AppDeps } from '../app-deps.ts';
import { clockCustomers } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import { runLifecycleSweep } from '../lifecycle/sweep.ts';
import { getSetting } from '../settings/service.ts';
import { RENEWAL_NOTICE_DAYS } from '../subscriptions/reminders.ts';
import { clockCustomerIds, dueLifecycleSteps, findTestClockRow, nextDueMoment, updateTestClockRow } from './repo.ts';

export interface AdvanceOutcome {
  testClockId: string;
  /** Moments whose steps ran (the start, each due moment, the new time). */
  moments: number;
  invoicesCreated: number;
  /** Milliseconds per step, summed over the moments (where the advance's time went). */
  stepMs: Record<string, number>;
}

/** Runs (or resumes) the clock's advance; does nothing unless the clock is advancing. */
export async function advanceTestClock(
  deps: AppDeps,
  testClockId: string,
): Promise<AdvanceOutcome | { skipped: true }> {
  const clock = await findTestClockRow(deps.db, testClockId);
  if (clock?.status !== 'advancing' || !clock.advance_target) return { skipped: true };
  const target = clock.advance_target;
  // No customer joins a clock while it advances (TC-2), so its customers are read once.
  const customerIds = await clockCustomerIds(deps.db, testClockId);
  const scope = clockCustomers(testClockId, customerIds);
  const reminders = {
    trialEndingDays: await getSetting(deps.db, 'emails.trial_ending_days'),
    renewalNoticeDays: RENEWAL_NOTICE_DAYS,
  };
  const outcome: AdvanceOutcome = { testClockId, moments: 0, invoicesCreated: 0, stepMs: {} };
  // The clock's own time first: what fell due there since the last advance (a new invoice to auto-charge).
  let at = clock.advance_cursor ?? clock.frozen_time;
  // The first moment runs every step (what fell due before, or a crashed attempt's rest); the others those due.
  let only: Set<string> | undefined;
  for (;;) {
    const summary = await runLifecycleSweep(deps, at, { scope, only });
    if (summary.errors > 0)
      throw new Error(
        `test clock ${testClockId}: lifecycle steps failed as of ${at.toISOString()} ` +
          `(${summary.failedSteps.join(', ') || 'renewals'}); the retry resumes there`,
      );
    outcome.moments += 1;
    outcome.invoicesCreated += summary.invoicesCreated;
    for (const [step, ms] of Object.entries(summary.durationsMs))
      outcome.stepMs[step] = (outcome.stepMs[step] ?? 0) + ms;
    if (at.getTime() >= target.getTime()) break;
    await updateTestClockRow(deps.db, testClockId, { advance_cursor: at });
    at = await nextDueMoment(deps.db, testClockId, at, target, reminders);
    only = await dueLifecycleSteps(deps.db, customerIds, at);
  }
  await updateTestClockRow(deps.db, testClockId, {
    status: 'ready',
    frozen_time: target,
    advance_target: null,
    advance_cursor: null,
    last_error: null,
  });
  deps.logger.info(outcome, 'test clock advanced');
  return outcome;
}

/** The last attempt failed: the clock is `failed` at the last moment it reached, and can be advanced again. */
export async function failTestClockAdvance(db: Db, testClockId: string, error: unknown): Promise<void> {
  const clock = await findTestClockRow(db, testClockId);
  if (clock?.status !== 'advancing') return;
  await updateTestClockRow(db, testClockId, {
    status: 'failed',
    frozen_time: clock.advance_cursor ?? clock.frozen_time,
    advance_target: null,
    advance_cursor: null,
    last_error: String((error as Error)?.message ?? error).slice(0, 1000),
  });
}
