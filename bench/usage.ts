/**
 * `npm run bench` (issue 35, U-14): usage ingestion and the usage read, in one run.
 *
 * - Ingestion: POST /api/v1/usage/events with batches of 100 and of 1,000 new events at BENCH_CONNECTIONS (32),
 *   spread over the keys of BENCH_USAGE_CUSTOMERS customers, beside the raw ceiling of the same batches
 *   (bench/usage-ceiling-server.ts: Koa, the same API-key check, one multi-row INSERT into a plain table with the
 *   same unique key). Printed as events/s; the aim is a ratio >= 0.5 for both.
 * - Current usage: GET /api/v1/subscriptions/:id/usage of a subscription with BENCH_USAGE_PERIOD_EVENTS (1,000,000)
 *   events in its period and BENCH_USAGE_TABLE_EVENTS (10,000,000) in the events table; the aim is p99 <= 50 ms.
 *
 * BENCH_SECONDS, BENCH_WARMUP_SECONDS and BENCH_CONNECTIONS as bench/run.ts; BENCH_USAGE_SIZES (`100,1000`) the batch
 * sizes measured.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../src/actor.ts';
import { createApiKey } from '../src/api-keys/service.ts';
import { createKnex } from '../src/db/knex.ts';
import { createMetric } from '../src/metering/service.ts';
import { createPlan } from '../src/plans/service.ts';
import { createSubscription } from '../src/subscriptions/service.ts';
import { processTree, roleArgs } from '../test/faults/processes.ts';
import { cpuTicks, parentPid, treeTicks } from './proc-cpu.ts';
import {
  cleanUp,
  formatTable,
  type LoadOptions,
  type LoadSpec,
  measure,
  onCleanup,
  problemOf,
  type Row,
  startBenchDatabase,
  startChildServer,
} from './harness.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const options: LoadOptions = {
  seconds: env('BENCH_SECONDS', 10),
  warmupSeconds: env('BENCH_WARMUP_SECONDS', 2),
  connections: env('BENCH_CONNECTIONS', 32),
};
const CUSTOMERS = env('BENCH_USAGE_CUSTOMERS', 64);
const PERIOD_EVENTS = env('BENCH_USAGE_PERIOD_EVENTS', 1_000_000);
const TABLE_EVENTS = Math.max(env('BENCH_USAGE_TABLE_EVENTS', 10_000_000), PERIOD_EVENTS);
const POOL_MAX = '10';
/** BENCH_USAGE_SIZES: the batch sizes measured (a profiling run may take one); U-14 names 100 and 1,000. */
const SIZES = (process.env.BENCH_USAGE_SIZES ?? '100,1000').split(',').map(Number);
const say = (message: string) => console.error(`[bench usage] ${message}`);
/** BENCH_CPU_PROF_DIR: the ingesting service runs under `node --cpu-prof`, its profiles written there. */
const profile = process.env.BENCH_CPU_PROF_DIR
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
  : [];

interface World {
  metricCode: string;
  keys: string[];
  /** The subscription whose period holds PERIOD_EVENTS events, and its key. */
  heavy: { subscriptionId: string; key: string };
}

/** Customers on a usage plan (one count metric, per unit), each with a subscription and an API key. */
async function seedCustomers(knex: Knex): Promise<World> {
  const metric = await createMetric(knex, { code: 'api_calls', name: 'API calls', aggregation: 'count' }, SYSTEM_ACTOR);
  const [product] = await knex('products')
    .insert({ name: 'Bench API', product_type: 'api', price: '0' })
    .returning('id');
  const plan = await createPlan(
    knex,
    {
      productId: product.id,
      name: 'Bench API (per call)',
      pricingModel: 'usage',
      billingCycle: 'monthly',
      basePrice: '0',
      currency: 'USD',
      charges: [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.0015' }],
    },
    SYSTEM_ACTOR,
  );
  const since = new Date(Date.now() - 10 * 86_400_000);
  const subs: { subscriptionId: string; key: string }[] = [];
  for (let i = 0; i <= CUSTOMERS; i++) {
    const [customer] = await knex('customers')
      .insert({ name: `Usage customer ${i}`, email: `usage-${i}@bench.test` })
      .returning('id');
    const sub = await createSubscription(
      knex,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: since },
    );
    const { key } = await createApiKey(knex, { name: 'bench', customerId: customer.id }, SYSTEM_ACTOR);
    subs.push({ subscriptionId: sub.id, key });
  }
  const heavy = subs.pop()!;
  return { metricCode: metric.code, keys: subs.map((s) => s.key), heavy };
}

/**
 * The read's data: PERIOD_EVENTS events in the heavy subscription's period with its running aggregate, and the rest
 * of TABLE_EVENTS as other customers' events, written set-wise straight into the tables (a bulk load, not the API).
 */
async function seedEvents(knex: Knex, heavy: World['heavy']): Promise<void> {
  const sub = await knex('subscriptions').where({ id: heavy.subscriptionId }).first();
  const charge = await knex('plan_charges').where({ plan_id: sub.plan_id }).first();
  const started = Date.now();
  const insert = (count: number, customer: string, subscription: string) =>
    knex.raw(
      `insert into usage_events (customer_id, transaction_id, month, "timestamp", content_hash, metric_id,
         subscription_id, charge_id, period_start, value, properties)
       select customer_id, transaction_id, date_trunc('month', t at time zone 'UTC')::date, t, 'seed', metric_id,
         subscription_id, charge_id, period_start, null, null
       from (select ?::uuid customer_id, 'seed-' || g transaction_id,
         ?::timestamptz + (g % 600000) * interval '1 second' t, ?::uuid metric_id, ?::uuid subscription_id,
         ?::uuid charge_id, ?::timestamptz period_start from generate_series(1, ?) g) s`,
      [customer, sub.current_period_start, charge.metric_id, subscription, charge.id, sub.current_period_start, count],
    );
  say(`seeding ${PERIOD_EVENTS} events in one subscription's period`);
  await insert(PERIOD_EVENTS, sub.customer_id, sub.id);
  await knex.raw(
    `insert into usage_aggregates (customer_id, subscription_id, charge_id, period_start, period_end, aggregation,
       quantity, events) values (?, ?, ?, ?, ?, 'count', ?, ?)`,
    [
      sub.customer_id,
      sub.id,
      charge.id,
      sub.current_period_start,
      sub.current_period_end,
      PERIOD_EVENTS,
      PERIOD_EVENTS,
    ],
  );
  const rest = TABLE_EVENTS - PERIOD_EVENTS;
  const chunk = 1_000_000;
  for (let done = 0; done < rest; done += chunk) {
    say(`seeding other customers' events: ${done + PERIOD_EVENTS} of ${TABLE_EVENTS}`);
    await insert(Math.min(chunk, rest - done), randomUUID(), randomUUID());
  }
  await knex.raw('vacuum (analyze) usage_events, usage_aggregates');
  say(`seeded ${TABLE_EVENTS} events in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * CPU seconds (user + system) spent by the server under test and by PostgreSQL while `run` runs: req/s moves with
 * the neighbours' load on this shared machine, CPU per event hardly does (bench/cpu-per-request.ts's reasoning).
 */
async function withCpu<T>(postmaster: number, run: () => Promise<T>): Promise<{ result: T; app: number; pg: number }> {
  // PostgreSQL is this process's descendant when the bench started it (embedded), else it counts apart.
  const holdsPg = processTree(process.pid).includes(postmaster);
  const app = () => treeTicks(process.pid) - cpuTicks(process.pid) - (holdsPg ? treeTicks(postmaster) : 0);
  const [appBefore, pgBefore] = [app(), treeTicks(postmaster)];
  const result = await run();
  return { result, app: (app() - appBefore) / 100, pg: (treeTicks(postmaster) - pgBefore) / 100 };
}

/** Batches of `size` new events, each request with the next customer's key; ids unique across the run. */
function ingestLoad(path: string, world: World, size: number, run: string): LoadSpec {
  let n = 0;
  let k = 0;
  return {
    method: 'POST',
    next: () => {
      const key = world.keys[k++ % world.keys.length]!;
      const batch = ++n;
      const events = Array.from({ length: size }, (_, i) => ({
        transactionId: `${run}-${size}-${batch}-${i}`,
        metric: world.metricCode,
      }));
      return { path, body: { events }, headers: { authorization: `Bearer ${key}` } };
    },
    accept: (body) => !body.includes('"rejected"') && !body.includes('"duplicate"'),
  };
}

async function main(): Promise<number> {
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 2);
  onCleanup(() => knex.destroy());
  const world = await seedCustomers(knex);
  await knex.raw(`create table usage_ceiling_events (
    customer_id uuid not null, transaction_id text not null, metric text not null, received_at timestamptz not null,
    primary key (customer_id, transaction_id))`);
  const postmaster = parentPid((await knex.raw('select pg_backend_pid() as pid')).rows[0].pid);
  const rows: Row[] = [];
  const eventsPerSecond: string[] = [];
  /** CPU µs per event of the app and of PostgreSQL, warm-up included (events sent estimated from the req/s). */
  const perEvent = (cpu: { app: number; pg: number }, requestsPerSecond: number, size: number) => {
    const events = requestsPerSecond * (options.seconds + options.warmupSeconds) * size;
    const micros = (seconds: number) => ((seconds / events) * 1e6).toFixed(1);
    return `app ${micros(cpu.app)} + PostgreSQL ${micros(cpu.pg)} µs CPU/event`;
  };
  for (const size of SIZES) {
    const ceiling = await startChildServer(
      'usage ceiling',
      ['--import', 'tsx', 'bench/usage-ceiling-server.ts'],
      { DATABASE_URL: databaseUrl, DB_POOL_MAX: POOL_MAX },
      '/healthz',
    );
    say(`ceiling, batches of ${size}`);
    const rawCpu = await withCpu(postmaster, () =>
      measure(ceiling.baseUrl, ingestLoad('/usage/events', world, size, randomUUID()), options),
    );
    const raw = rawCpu.result;
    await ceiling.stop();
    const service = await startChildServer(
      'service',
      [...profile, ...roleArgs('web')],
      { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', NODE_ENV: 'development', DB_POOL_MAX: POOL_MAX },
      '/readyz',
    );
    say(`service, batches of ${size}`);
    const realCpu = await withCpu(postmaster, () =>
      measure(service.baseUrl, ingestLoad('/api/v1/usage/events', world, size, randomUUID()), options),
    );
    const real = realCpu.result;
    await service.stop();
    const ceilingName = `(u) Koa+pg key check + INSERT of ${size}`;
    rows.push({ name: ceilingName, measurement: raw });
    rows.push({
      name: `POST /api/v1/usage/events (${size} a batch)`,
      measurement: real,
      ceilingName,
      ceilingRequestsPerSecond: raw.requestsPerSecond,
      aim: 0.5,
    });
    eventsPerSecond.push(
      `batches of ${size}: ${Math.round(real.requestsPerSecond * size)} events/s ` +
        `(ceiling ${Math.round(raw.requestsPerSecond * size)} events/s, ratio ` +
        `${(real.requestsPerSecond / raw.requestsPerSecond).toFixed(2)}, aim >= 0.5); ` +
        `service ${perEvent(realCpu, real.requestsPerSecond, size)}, ` +
        `ceiling ${perEvent(rawCpu, raw.requestsPerSecond, size)}`,
    );
  }

  await seedEvents(knex, world.heavy);
  const service = await startChildServer(
    'service',
    roleArgs('web'),
    { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', NODE_ENV: 'development', DB_POOL_MAX: POOL_MAX },
    '/readyz',
  );
  say('current usage read');
  const readCpu = await withCpu(postmaster, () =>
    measure(
      service.baseUrl,
      {
        method: 'GET',
        headers: { authorization: `Bearer ${world.heavy.key}` },
        next: () => ({ path: `/api/v1/subscriptions/${world.heavy.subscriptionId}/usage` }),
        accept: (body) => body.includes(`"quantity":"${PERIOD_EVENTS}"`),
      },
      options,
    ),
  );
  const read = readCpu.result;
  const readRequests = read.requestsPerSecond * (options.seconds + options.warmupSeconds);
  await service.stop();
  rows.push({
    name: `GET /api/v1/subscriptions/:id/usage (${PERIOD_EVENTS} in period, ${TABLE_EVENTS} in table)`,
    measurement: read,
    aimP99Ms: 50,
  });

  console.log('');
  console.log(
    `${options.connections} connections, ${options.seconds} s each after ${options.warmupSeconds} s warm-up; ` +
      `${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(formatTable(rows));
  for (const line of eventsPerSecond) console.log(`usage ingestion, ${line}`);
  console.log(
    `usage read p99 ${read.p99Ms} ms (aim <= 50 ms); app ${((readCpu.app / readRequests) * 1e3).toFixed(2)} + ` +
      `PostgreSQL ${((readCpu.pg / readRequests) * 1e3).toFixed(2)} ms CPU/request`,
  );
  const failures = rows.flatMap((row) => {
    const problem = problemOf(row.measurement);
    return problem ? [`${row.name}: ${problem}`] : [];
  });
  if (failures.length > 0) {
    console.error(`\nBENCH FAILED: results with errors do not count\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    return 1;
  }
  return 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  console.error('\nBENCH FAILED:', error instanceof Error ? error.message : error);
} finally {
  await cleanUp();
}
process.exit(exitCode);
