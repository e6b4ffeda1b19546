/**
 * Profiling aid for issue 35 (not part of `npm run bench`): where one usage batch's time goes, in this process on a
 * throw-away database: the whole ingestEvents call against its one storing statement (timed by knex's query events),
 * for PROFILE_BATCHES batches of PROFILE_BATCH new events, one after another (no concurrency: the cost of one batch).
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createMetric } from '../../src/metering/service.ts';
import { createPlan } from '../../src/plans/service.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { ingestEvents } from '../../src/usage-api/ingest.ts';
import { v1EventsBody } from '../../src/usage-api/schema.ts';
import { cleanUp, onCleanup, startBenchDatabase } from '../harness.ts';

const BATCHES = Number(process.env.PROFILE_BATCHES ?? 60);
const SIZE = Number(process.env.PROFILE_BATCH ?? 1000);

async function main(): Promise<void> {
  const knex = createKnex(await startBenchDatabase(), 4);
  onCleanup(() => knex.destroy());
  const metric = await createMetric(knex, { code: 'calls', name: 'Calls', aggregation: 'count' }, SYSTEM_ACTOR);
  const [product] = await knex('products').insert({ name: 'API', product_type: 'api', price: '0' }).returning('id');
  const plan = await createPlan(
    knex,
    {
      productId: product.id,
      name: 'Per call',
      pricingModel: 'usage',
      billingCycle: 'monthly',
      basePrice: '0',
      currency: 'USD',
      charges: [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.001' }],
    },
    SYSTEM_ACTOR,
  );
  const [customer] = await knex('customers').insert({ name: 'C', email: 'c@example.test' }).returning('id');
  await createSubscription(knex, { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' }, SYSTEM_ACTOR, {
    now: new Date(Date.now() - 86_400_000),
  });
  const sql = new Map<string, number>();
  const started = new Map<string, number>();
  knex.on('query', (q: { __knexQueryUid: string }) => started.set(q.__knexQueryUid, performance.now()));
  knex.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
    const key = q.sql.replace(/\s+/g, ' ').slice(0, 60);
    sql.set(key, (sql.get(key) ?? 0) + performance.now() - started.get(q.__knexQueryUid)!);
  });
  let parse = 0;
  let total = 0;
  const lsn = async () => (await knex.raw('select pg_current_wal_lsn() as l')).rows[0].l as string;
  const walStart = await lsn();
  for (let b = 0; b < BATCHES; b++) {
    const raw = JSON.stringify({
      events: Array.from({ length: SIZE }, (_, i) => ({ transactionId: `b${b}-${i}`, metric: 'calls' })),
    });
    const t0 = performance.now();
    const body = v1EventsBody.parse(JSON.parse(raw));
    const t1 = performance.now();
    await ingestEvents(
      knex,
      body.events.map((e) => ({ ...e, customerId: customer.id })),
    );
    const t2 = performance.now();
    if (b >= 5) {
      parse += t1 - t0;
      total += t2 - t0;
    }
  }
  const wal = await knex.raw('select pg_wal_lsn_diff(?, ?) as b', [await lsn(), walStart]);
  console.log(`WAL ${(Number(wal.rows[0].b) / BATCHES / SIZE).toFixed(0)} bytes/event`);
  if (process.env.PROFILE_EXPLAIN) {
    // The storing statement is prepared (db/prepared.ts), so it is caught at pg's client, not in knex's events.
    const events = Array.from({ length: SIZE }, (_, i) => ({ transactionId: `x-${i}`, metric: 'calls' }));
    let captured: { text: string; values: unknown[] } | undefined;
    const clientQuery = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      const c = config as { text?: string; values?: unknown[] };
      if (c?.text?.startsWith('with groups')) captured = { text: c.text, values: c.values ?? [] };
      return (clientQuery as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof clientQuery;
    await knex
      .transaction(async (trx) => {
        await ingestEvents(
          trx,
          events.map((e) => ({ ...e, customerId: customer.id })),
        );
        throw new Error('rollback');
      })
      .catch(() => undefined);
    pg.Client.prototype.query = clientQuery;
    const plan = await knex.raw(`explain (analyze, buffers, wal) ${captured!.text.replace(/\$(\d+)/g, '?')}`, [
      ...(captured!.values as string[]),
    ]);
    for (const row of plan.rows) console.log(row['QUERY PLAN']);
  }
  const per = (ms: number) => `${(((ms / (BATCHES - 5)) * 1000) / SIZE).toFixed(1)} µs/event`;
  console.log(`batches of ${SIZE}: total ${per(total)}; JSON + zod ${per(parse)}`);
  for (const [key, ms] of [...sql].sort((a, b) => b[1] - a[1])) console.log(`  sql ${per(ms)}  ${key}`);
}

try {
  await main();
} finally {
  await cleanUp();
}
