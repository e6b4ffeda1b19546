/**
 * `npm run demo`'s work: a year of a small software company's billing, written through the domain services
 * (no SQL of our own), reproducible from a fixed random seed. Time moves on a timeline: dated actions run
 * with their date as the services' clock, and the lifecycle sweep runs as of each week's end (D-81), so
 * renewals, trial ends, scheduled cancellations and overdue marks happen as they would have.
 */
import type { AppDeps } from '../app-deps.ts';
import { runLifecycleInProcess } from '../lifecycle/runs.ts';
import type { LifecycleSummary } from '../lifecycle/sweep.ts';
import { createCatalog } from './catalog.ts';
import { Collections, type Payer } from './collections.ts';
import { issueLicenses, scheduleExtras, type ExtrasCounts } from './extras.ts';
import { seededRandom } from './random.ts';
import { createCustomers, planStory, type StoryCounts } from './story.ts';
import { backdateSince, databaseNow, stampedTables } from './backdate.ts';
import { addDays, type StepDating, Timeline } from './timeline.ts';

export const DEMO_SEED = 20260117;

export interface DemoOptions {
  /** The demo's "today": the year of history ends here (default: now). */
  now?: Date;
  seed?: number;
  /** Progress lines (a month at a time). */
  log?: (line: string) => void;
}

export interface DemoSummary extends StoryCounts, ExtrasCounts {
  from: string;
  to: string;
  customers: number;
  sweeps: number;
  invoicesBySweeps: number;
  invoicesOverdue: number;
  payments: number;
  licenses: number;
  activations: number;
}

export type DemoResult = { status: 'seeded'; summary: DemoSummary } | { status: 'already_seeded' };

async function sweep(deps: AppDeps, asOf: Date): Promise<LifecycleSummary> {
  const run = await runLifecycleInProcess(deps, asOf);
  const summary = run?.summary as unknown as LifecycleSummary | undefined;
  if (run?.status !== 'succeeded' || !summary)
    throw new Error(
      `the lifecycle sweep as of ${asOf.toISOString()} ended ${run?.status ?? 'unknown'}: ${run?.error ?? ''}`,
    );
  if (summary.errors > 0)
    throw new Error(
      `the lifecycle sweep as of ${asOf.toISOString()} had ${summary.errors} errors ` +
        `(${summary.failedSteps.join(', ')})`,
    );
  return summary;
}

export async function seedDemo(deps: AppDeps, options: DemoOptions = {}): Promise<DemoResult> {
  if (!deps.config.LIFECYCLE_ALLOW_AS_OF)
    throw new Error(
      'the demo moves the lifecycle sweep through the past year (D-81), which is refused unless ' +
        'LIFECYCLE_ALLOW_AS_OF=true: run it with that set (never on a production database)',
    );
  const log = options.log ?? (() => {});
  const end = options.now ?? new Date();
  const start = addDays(end, -365);
  const seed = options.seed ?? DEMO_SEED;
  const random = seededRandom(seed);

  const customers = await createCustomers(deps);
  if (!customers) return { status: 'already_seeded' };
  const catalog = await createCatalog(deps.db);

  const tables = await stampedTables(deps.db);
  const dating: StepDating = {
    mark: () => databaseNow(deps.db),
    move: (since, at) => backdateSince(deps.db, tables, since, at),
  };
  const payers = new Map<string, Payer>();
  const timeline: Timeline = new Timeline(() => collections.discover(), dating);
  const collections = new Collections(
    deps.db,
    timeline,
    payers,
    new Map(customers.map((c) => [c.id, c.index])),
    seed,
    start,
  );
  const story = planStory({ deps, timeline, catalog, random, start, end, payers }, customers);
  const extrasContext = { deps, timeline, random, end, customers };
  const extras = scheduleExtras(extrasContext);

  let sweeps = 0;
  let invoicesBySweeps = 0;
  let invoicesOverdue = 0;
  const sweepAt = async (asOf: Date) => {
    await timeline.runThrough(asOf);
    const since = await dating.mark();
    const summary = await sweep(deps, asOf);
    sweeps += 1;
    invoicesBySweeps += summary.invoicesCreated;
    invoicesOverdue += summary.invoicesOverdue;
    await collections.discover();
    await dating.move(since, asOf);
  };
  let month = '';
  for (let asOf = addDays(start, 7); asOf < end; asOf = addDays(asOf, 7)) {
    await sweepAt(asOf);
    const current = asOf.toISOString().slice(0, 7);
    if (current !== month)
      log(`${current}: ${story.subscriptions} subscriptions, ${collections.payments} payments so far`);
    month = current;
  }
  await sweepAt(end);
  const licenses = await issueLicenses(extrasContext, catalog);

  return {
    status: 'seeded',
    summary: {
      from: start.toISOString(),
      to: end.toISOString(),
      customers: customers.length,
      ...story,
      ...extras,
      sweeps,
      invoicesBySweeps,
      invoicesOverdue,
      payments: collections.payments,
      ...licenses,
    },
  };
}
