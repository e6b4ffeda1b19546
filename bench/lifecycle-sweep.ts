/**
 * The daily lifecycle sweep (issue 8): LIFECYCLE_BENCH_COUNT (100,000) monthly subscriptions whose period
 * ended, renewed end to end by a real `workers/lifecycle.ts` process: period advanced, an issued invoice with
 * its line, invoice.created, a pending webhook delivery row for a subscribed endpoint (the deliveries table is
 * the delivery queue) and a `subscription.renew` audit row. Prints renewals/s (the renewal step, and the whole
 * sweep from request to finished run) beside a raw ceiling measured in the same run: this process inserting
 * the same number of invoice rows into a copy of the invoices table (same columns and indexes), 500 rows per
 * statement and transaction. Aims (issue 20): >= 0.5 of that ceiling; LIFECYCLE_BENCH_COUNT=1000000 runs
 * to the end, printing its wall times and the database's size. Then, unless LIFECYCLE_BENCH_FLOOR=0, the floor
 * under that ratio (bench/renewal-floor.ts: the same rows with no Node work) on the same database, and the sweep's
 * rate as a share of it.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../src/actor.ts';
import { requestLifecycleRun } from '../src/lifecycle/service.ts';
import { RENEWAL_BATCH_SIZE, RENEWAL_CONCURRENCY } from '../src/subscriptions/renew-due.ts';
import { waitForRun } from '../src/lifecycle/runs.ts';
import type { LifecycleSummary } from '../src/lifecycle/sweep.ts';
import { onCleanup, runBenchScript, startBenchDatabaseWithQueue } from './harness.ts';
import { seedRows } from './fixtures.ts';
import {
  ANCHOR,
  AS_OF,
  CEILING_BATCH,
  COUNT,
  insertBenchEndpoint,
  rawInvoiceInserts,
  giveUsageCharges,
  seedDueSubscriptions,
} from './lifecycle-fixtures.ts';
import { measureRenewalFloor } from './renewal-floor.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (message: string) => console.error(`[bench lifecycle] ${message}`);

async function count(knex: Knex, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<number> {
  return Number((await knex.raw(sql, bindings)).rows[0].n);
}

async function main(): Promise<void> {
  const benchStarted = performance.now();
  say('starting PostgreSQL and migrating a bench database');
  const { databaseUrl, knex } = await startBenchDatabaseWithQueue(4);

  const { customerIds, planIds } = await seedRows(knex);
  const endpointId = await insertBenchEndpoint(knex);
  say(`seeding ${COUNT} due subscriptions`);
  const seedStarted = performance.now();
  await seedDueSubscriptions(knex, customerIds, planIds);
  const withUsage = await giveUsageCharges(knex);
  say(`${withUsage} of them on a plan with two usage charges, with usage to bill`);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  say(`raw ceiling: ${COUNT} invoice rows, ${CEILING_BATCH} per insert`);
  const ceiling = await rawInvoiceInserts(knex, customerIds);
  // The ceiling's copy is not part of the service's data: gone before the sweep, so the size printed is the service's.
  await knex.raw('drop table bench_invoice_ceiling');

  say('starting the lifecycle worker (workers/lifecycle.ts)');
  // LIFECYCLE_CPU_PROF=<folder>: the worker writes a V8 CPU profile there when it stops (where its time went).
  const cpuProfile = process.env.LIFECYCLE_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.LIFECYCLE_CPU_PROF}`]
    : [];
  const child = spawn(process.execPath, [...cpuProfile, '--import', 'tsx', 'workers/lifecycle.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  onCleanup(() => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });

  say(`sweep as of ${AS_OF.toISOString()}`);
  const started = performance.now();
  const { run } = await requestLifecycleRun(knex, AS_OF, SYSTEM_ACTOR);
  // At the slowest renewal rate seen on a loaded 2-core machine (~500/s), with room: 1M takes well under an hour.
  const done = await waitForRun(knex, run.id, Math.max(30 * 60_000, (COUNT / 250) * 1000), 100);
  const seconds = (performance.now() - started) / 1000;
  if (done?.status !== 'succeeded') throw new Error(`the sweep ended ${done?.status}: ${done?.error}`);
  const summary = done.summary as unknown as LifecycleSummary;

  // What "renewed end to end" means, checked: every subscription moved, one invoice + line + event + pending delivery
  // each (the
  // deliveries table is the delivery queue: fan-out adds no job per delivery).
  const checks = {
    subscriptionsAdvanced: await count(
      knex,
      `select count(*) as n from subscriptions where period_number = 1 and current_period_start = ?::timestamptz + ` +
        `interval '1 month'`,
      [ANCHOR],
    ),
    // The sweep's period only: the fixtures hold last year's invoices too (bench/fixtures.ts seedHistory).
    invoices: await count(
      knex,
      `select count(*) as n from invoices where subscription_id is not null and period_start = ?::timestamptz + ` +
        `interval '1 month'`,
      [ANCHOR],
    ),
    lines: await count(
      knex,
      `select count(*) as n from invoice_line_items l join invoices i on i.id = l.invoice_id where i.period_start ` +
        `= ?::timestamptz + interval '1 month' and l.usage is null`,
      [ANCHOR],
    ),
    invoiceCreatedEvents: await count(knex, `select count(*) as n from events where type = 'invoice.created'`),
    deliveries: await count(knex, 'select count(*) as n from webhook_deliveries'),
    highestInvoiceNumber: await count(
      knex,
      `select coalesce(max(last_seq), 0) as n from document_counters where kind = 'INV' and year = ?`,
      [AS_OF.getUTCFullYear()],
    ),
    renewAuditRows: await count(
      knex,
      `select count(*) as n from audit_log where action = 'subscription.renew' and actor = 'system'`,
    ),
  };
  const databaseBytes = await count(knex, 'select pg_database_size(current_database()) as n');
  const wrong = Object.entries(checks).filter(([, n]) => n !== COUNT);
  // Issue 35: two usage lines on each renewal of the subscriptions with usage charges.
  const usageLines = await count(knex, 'select count(*) as n from invoice_line_items where usage is not null');
  if (usageLines !== 2 * withUsage) wrong.push(['usageLines', usageLines]);
  if (wrong.length > 0 || summary.invoicesCreated !== COUNT)
    throw new Error(`the sweep did not renew everything: ${JSON.stringify({ checks, summary })}`);

  const renewalSeconds = summary.durationsMs.renewals! / 1000;
  const perSecond = COUNT / renewalSeconds;
  console.log('');
  console.log(
    `lifecycle sweep: ${COUNT} subscriptions due, batches of ${RENEWAL_BATCH_SIZE}, ${RENEWAL_CONCURRENCY} in ` +
      `flight (ceiling: ${CEILING_BATCH} rows per insert); ${os.cpus().length} CPUs, load ` +
      `${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(
    `renewals/s ${perSecond.toFixed(0)}   raw invoice-insert ceiling ${ceiling.toFixed(0)} rows/s   ratio ` +
      `${(perSecond / ceiling).toFixed(2)} (aim >= 0.5)`,
  );
  const runSeconds = (done.finished_at!.getTime() - done.started_at!.getTime()) / 1000;
  console.log(
    `whole sweep (all steps), run started to finished: ${runSeconds.toFixed(1)} s ` +
      `(${(COUNT / runSeconds).toFixed(0)} renewals/s); request to finished, worker start-up included: ` +
      `${seconds.toFixed(1)} s`,
  );
  console.log(`steps ms ${JSON.stringify(summary.durationsMs)}`);
  console.log(
    `wall time: sweep ${seconds.toFixed(1)} s (request to finished run); seeding ${seedSeconds.toFixed(1)} s; ` +
      `whole bench ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`,
  );
  console.log(
    `database size after the sweep: ${(databaseBytes / 1024 ** 2).toFixed(0)} MB (pg_database_size, the ceiling's ` +
      `table dropped)`,
  );
  console.log(`checked: ${JSON.stringify(checks)}`);

  if (process.env.LIFECYCLE_BENCH_FLOOR === '0') return;
  // The worker is done: stopped first, so the floor has the machine the sweep had.
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  // Last, since it starts the subscriptions over: the same rows written with no Node work (bench/renewal-floor.ts),
  // on as many connections as the sweep has batches in flight. No renewal writing these rows beats it here.
  say(`renewal floor: ${COUNT} due subscriptions again, ${RENEWAL_CONCURRENCY} connections`);
  const floor = await measureRenewalFloor(
    knex,
    { customerIds, planIds, endpointId, count: COUNT },
    RENEWAL_CONCURRENCY,
  );
  console.log(
    `renewal floor (the same rows in one SQL statement per batch, no Node work), ${RENEWAL_CONCURRENCY} ` +
      `connections: ${floor.renewalsPerSecond.toFixed(0)} renewals/s, ratio ` +
      `${(floor.renewalsPerSecond / ceiling).toFixed(2)} of the ceiling, PostgreSQL ` +
      `${floor.postgresMicros.toFixed(0)} µs per renewal; the sweep at ` +
      `${(perSecond / floor.renewalsPerSecond).toFixed(2)} of the floor`,
  );
}

await runBenchScript(import.meta.url, 'LIFECYCLE', main);
