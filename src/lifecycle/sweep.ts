import type { AppDeps } from '../app-deps.ts';
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import { refreshHealthScores } from '../reporting/customer-view.ts';
import { expireLicenses } from '../licenses/expiry.ts';
import { refreshProductMetrics } from '../products/metrics.ts';
import { renewDueSubscriptions } from '../subscriptions/renew-due.ts';
import { queueReminders } from '../subscriptions/reminders.ts';
import { autoChargeStep, dunningRetryStep } from './dunning-steps.ts';
import { markOverdueInvoices } from './overdue.ts';

/** What one sweep did (D-80), counts per step; `errors` counts subscriptions and steps that failed. */
export interface LifecycleSummary {
  asOf: string;
  invoicesCreated: number;
  periodsAdvanced: number;
  trialsEnded: number;
  canceled: number;
  charged: number;
  chargeFailures: number;
  invoicesOverdue: number;
  licensesExpired: number;
  /** Dunning retry attempts made. */
  dunning: number;
  dunningStarted: number;
  dunningResolved: number;
  dunningFailed: number;
  productsRefreshed: number;
  healthScoresChanged: number;
  /** Reminder emails written (trial.ending, renewal.upcoming), each once per occasion. */
  remindersQueued: number;
  errors: number;
  /** Steps that failed as a whole (logged); the sweep went on with the next. */
  failedSteps: string[];
  durationsMs: Record<string, number>;
}

type Counts = Partial<Omit<LifecycleSummary, 'asOf' | 'errors' | 'failedSteps' | 'durationsMs'>> & { errors?: number };

export interface SweepOptions {
  /** Subscriptions per renewal batch (D-82). */
  batchSize?: number;
  /** Renewal batches in flight at once. */
  concurrency?: number;
  /** Called between batches: the run's heartbeat. */
  heartbeat?: () => Promise<void>;
  /**
   * Whose records the steps move (issue 39, TC-4): the daily sweep's customers (on no test clock) unless a test
   * clock's are named; a clock's advance runs the customer steps only (the derived figures are the daily sweep's).
   */
  scope?: CustomerScope;
  /** Only these steps run (a test clock's advance skips those with nothing due for its customers); all by default. */
  only?: ReadonlySet<string>;
}

export function emptySummary(asOf: Date): LifecycleSummary {
  return {
    asOf: asOf.toISOString(),
    invoicesCreated: 0,
    periodsAdvanced: 0,
    trialsEnded: 0,
    canceled: 0,
    charged: 0,
    chargeFailures: 0,
    invoicesOverdue: 0,
    licensesExpired: 0,
    dunning: 0,
    dunningStarted: 0,
    dunningResolved: 0,
    dunningFailed: 0,
    productsRefreshed: 0,
    healthScoresChanged: 0,
    remindersQueued: 0,
    errors: 0,
    failedSteps: [],
    durationsMs: {},
  };
}

/**
 * The daily sweep as of `asOf` (D-80..D-83), step by step, each idempotent and batched:
 * renewals (periods, trials, scheduled cancellations, invoices), overdue invoices, expired licenses, then
 * auto-charge and dunning retries, and last the derived figures (product metrics, stored health scores),
 * so they include what the earlier steps changed. A step that fails is logged and counted and the next
 * step still runs: one broken part never stops the rest of the day's billing.
 */
export async function runLifecycleSweep(
  deps: AppDeps,
  asOf: Date,
  options: SweepOptions = {},
): Promise<LifecycleSummary> {
  const { db, logger } = deps;
  const heartbeat = options.heartbeat ?? (async () => {});
  const clock = { settings: deps.config };
  const scope = options.scope ?? REAL_CUSTOMERS;
  const steps: [string, () => Promise<Counts>][] = [
    [
      'renewals',
      async () => {
        const r = await renewDueSubscriptions(db, asOf, {
          batchSize: options.batchSize,
          concurrency: options.concurrency,
          clock,
          logger,
          onBatch: heartbeat,
          scope,
        });
        return {
          invoicesCreated: r.invoicesCreated,
          periodsAdvanced: r.periodsAdvanced,
          trialsEnded: r.trialsEnded,
          canceled: r.canceled,
          errors: r.errors,
        };
      },
    ],
    [
      'overdue',
      async () => ({ invoicesOverdue: await markOverdueInvoices(db, asOf, options.batchSize, heartbeat, scope) }),
    ],
    ['licenses', async () => ({ licensesExpired: await expireLicenses(db, asOf, undefined, scope) })],
    ['autoCharge', () => autoChargeStep(deps, asOf, scope)],
    ['dunning', () => dunningRetryStep(deps, asOf, scope)],
    ['reminders', async () => ({ remindersQueued: await queueReminders(db, asOf, heartbeat, scope) })],
  ];
  if (scope.kind === 'real')
    steps.push(
      ['productMetrics', async () => ({ productsRefreshed: (await refreshProductMetrics(db, asOf)).products })],
      ['healthScores', async () => ({ healthScoresChanged: await refreshHealthScores(db, asOf) })],
    );

  const summary = emptySummary(asOf);
  for (const [name, run] of steps) {
    if (options.only && !options.only.has(name)) continue;
    const started = performance.now();
    try {
      const counts = await run();
      for (const [key, value] of Object.entries(counts) as [keyof Counts, number][]) summary[key] += value;
      logger.info(
        { step: name, asOf: summary.asOf, scope, ...counts, ms: Math.round(performance.now() - started) },
        'lifecycle step done',
      );
    } catch (err) {
      summary.errors += 1;
      summary.failedSteps.push(name);
      logger.error({ err, step: name, asOf: summary.asOf }, 'lifecycle step failed; the sweep goes on');
    }
    summary.durationsMs[name] = Math.round(performance.now() - started);
    await heartbeat();
  }
  logger.info(summary, 'lifecycle sweep done');
  return summary;
}
