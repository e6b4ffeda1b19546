/**
 * Issue 39: a test clock of TEST_CLOCK_BENCH_CUSTOMERS (1,000) customers, each with a monthly subscription, advanced
 * by one year (12 renewals each, every moment of it replayed through the sweep's steps), beside the daily sweep's
 * renewals/s measured in the same run on as many real renewals (12,000 due subscriptions, one sweep). Both run in this
 * process on the same database. Aim: the advance's renewals/s (its whole wall time, every step of every moment) >= 0.5
 * of the daily sweep's renewal step.
 */
import os from 'node:os';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../src/actor.ts';
import type { AppDeps } from '../src/app-deps.ts';
import { loadConfig } from '../src/config.ts';
import { runLifecycleSweep } from '../src/lifecycle/sweep.ts';
import { createLogger } from '../src/logger.ts';
import { advanceTestClock } from '../src/test-clocks/advance.ts';
import { createTestClock, requestTestClockAdvance } from '../src/test-clocks/service.ts';
import { seedRows } from './fixtures.ts';
import { runBenchScript, startBenchDatabaseWithQueue } from './harness.ts';
import { AS_OF, seedDueSubscriptions } from './lifecycle-fixtures.ts';

const CUSTOMERS = Number(process.env.TEST_CLOCK_BENCH_CUSTOMERS ?? 1000);
const MONTHS = 12;
const CLOCK_START = new Date('2026-01-01T00:00:00.000Z');
const CLOCK_END = new Date('2027-01-01T00:00:00.000Z');
const say = (message: string) => console.error(`[bench test-clocks] ${message}`);

const count = async (knex: Knex, sql: string, bindings: Knex.RawBinding[] = []) =>
  Number((await knex.raw(sql, bindings)).rows[0].n);

/** A digest of the real customers' subscriptions: the advance must leave it as it is (TC-4). */
async function realState(knex: Knex): Promise<string> {
  const { rows } = await knex.raw(
    `select md5(string_agg(s.id::text || ':' || s.period_number || ':' || s.status, ',' order by s.id)) as digest
       from subscriptions s join customers c on c.id = s.customer_id where c.test_clock_id is null`,
  );
  return rows[0].digest;
}

/** The clock's customers, each with a monthly subscription that starts at the clock's time. */
async function seedClockCustomers(knex: Knex, clockId: string, planId: string): Promise<void> {
  await knex.raw(
    `with c as (
       insert into customers (name, email, test_clock_id)
       select 'Clock customer ' || g, 'clock-' || g || '@bench.test', ? from generate_series(1, ?) as g
       returning id
     )
     insert into subscriptions (customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
                                current_period_start, current_period_end, created_at)
     select c.id, ?, 'active', 'monthly', ?::timestamptz, 0, ?::timestamptz, ?::timestamptz + interval '1 month',
            ?::timestamptz
       from c`,
    [clockId, CUSTOMERS, planId, CLOCK_START, CLOCK_START, CLOCK_START, CLOCK_START],
  );
  await knex.raw('analyze customers, subscriptions');
}

async function main(): Promise<number> {
  say('starting PostgreSQL and migrating a bench database');
  const { databaseUrl, knex } = await startBenchDatabaseWithQueue(6);
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.TEST_CLOCK_BENCH_LOG ?? 'warn',
  });
  const deps: AppDeps = { db: knex, config, logger: createLogger(config, 'bench') };

  const { customerIds, planIds } = await seedRows(knex);
  const realRenewals = CUSTOMERS * MONTHS;
  say(`seeding ${realRenewals} due subscriptions of real customers and a clock of ${CUSTOMERS} customers`);
  await seedDueSubscriptions(knex, customerIds, planIds, realRenewals);
  const clock = await createTestClock(knex, { name: 'bench', frozenTime: CLOCK_START }, SYSTEM_ACTOR);
  await seedClockCustomers(knex, clock.id, planIds[0]!);

  say(`daily sweep as of ${AS_OF.toISOString()}`);
  const sweep = await runLifecycleSweep(deps, AS_OF);
  if (sweep.periodsAdvanced !== realRenewals) throw new Error(`the sweep renewed ${sweep.periodsAdvanced}`);
  const sweepRate = realRenewals / (sweep.durationsMs.renewals! / 1000);

  say(`advancing the clock from ${CLOCK_START.toISOString()} to ${CLOCK_END.toISOString()}`);
  const before = await realState(knex);
  await requestTestClockAdvance(knex, clock.id, { frozenTime: CLOCK_END }, SYSTEM_ACTOR);
  const started = performance.now();
  const outcome = await advanceTestClock(deps, clock.id);
  const advanceSeconds = (performance.now() - started) / 1000;
  if ('skipped' in outcome) throw new Error('the advance did not run');
  const clockInvoices = await count(
    knex,
    `select count(*) as n from invoices i join customers c on c.id = i.customer_id where c.test_clock_id = ?`,
    [clock.id],
  );
  const expected = CUSTOMERS * MONTHS;
  if (clockInvoices !== expected || outcome.invoicesCreated !== expected)
    throw new Error(`the advance made ${clockInvoices} invoices, not ${expected}`);
  if ((await realState(knex)) !== before) throw new Error("the advance changed real customers' subscriptions");
  const advanceRate = expected / advanceSeconds;
  const ratio = advanceRate / sweepRate;

  console.log('');
  console.log(
    `test clocks: ${CUSTOMERS} customers advanced one year (${MONTHS} renewals each) in ` +
      `${advanceSeconds.toFixed(1)} s ` +
      `over ${outcome.moments} moments; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; ` +
      `Node ${process.version}`,
  );
  console.log(
    `advance renewals/s ${advanceRate.toFixed(0)}   daily sweep renewals/s ${sweepRate.toFixed(0)} ` +
      `(${realRenewals} due, renewal step ${sweep.durationsMs.renewals} ms)   ratio ${ratio.toFixed(2)} (aim >= 0.5)`,
  );
  console.log(
    `advance's time per step, summed over its moments (ms): ${JSON.stringify(outcome.stepMs)}; its renewal ` +
      `step alone ${(expected / (outcome.stepMs.renewals! / 1000)).toFixed(0)} renewals/s`,
  );
  return ratio >= 0.5 ? 0 : 1;
}

await runBenchScript(import.meta.url, 'TEST CLOCKS', main);
