/**
 * What the lifecycle bench and its profiling aids share: the due subscriptions they renew and the raw ceiling
 * their renewals are measured against.
 */
import type { Knex } from 'knex';
import { onCleanup } from './harness.ts';

export const COUNT = Number(process.env.LIFECYCLE_BENCH_COUNT ?? 100_000);
export const ANCHOR = '2026-01-15T09:00:00.000Z';
export const AS_OF = new Date('2026-02-16T00:00:00.000Z');
/** Rows per statement and transaction of the raw ceiling. */
export const CEILING_BATCH = 500;

/** The enabled endpoint subscribed to invoice.created that every renewal's event is delivered to; answers its id. */
export async function insertBenchEndpoint(knex: Knex): Promise<string> {
  const [endpoint] = await knex('webhook_endpoints')
    .insert({
      url: 'https://receiver.bench.invalid/hook',
      events: ['invoice.created'],
      secret: 'whsec_bench_secret_0123456789abcdef',
    })
    .returning('id');
  return endpoint.id as string;
}

/**
 * `count` active monthly subscriptions anchored at ANCHOR, each one period in (it ended before AS_OF), spread over the
 * seeded customers and plans.
 */
export async function seedDueSubscriptions(
  knex: Knex,
  customerIds: string[],
  planIds: string[],
  count = COUNT,
): Promise<void> {
  await knex.raw(
    `insert into subscriptions (customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
      current_period_start, current_period_end, created_at)
     select (?::uuid[])[1 + g % ?], (?::uuid[])[1 + g % ?], 'active', 'monthly', ?::timestamptz, 0, ?::timestamptz,
       ?::timestamptz + interval '1 month', ?::timestamptz
       from generate_series(0, ? - 1) as g`,
    [customerIds, customerIds.length, planIds, planIds.length, ANCHOR, ANCHOR, ANCHOR, ANCHOR, count],
  );
  await knex.raw('analyze subscriptions, customers, plans');
}

/**
 * The ceiling: `count` invoice rows inserted straight into a same-shaped table, CEILING_BATCH per statement and
 * transaction.
 */
export async function rawInvoiceInserts(knex: Knex, customerIds: string[], count = COUNT): Promise<number> {
  await knex.raw('create table bench_invoice_ceiling (like invoices including all)');
  onCleanup(() => knex.raw('drop table if exists bench_invoice_ceiling').then(() => undefined));
  const started = performance.now();
  for (let done = 0; done < count; done += CEILING_BATCH) {
    const rows = Array.from({ length: Math.min(CEILING_BATCH, count - done) }, (_, i) => ({
      customer_id: customerIds[(done + i) % customerIds.length],
      invoice_number: `CEIL-2026-${done + i + 1}`,
      status: 'issued',
      currency: 'USD',
      tax_rate: '0',
      subtotal: '29.00',
      tax_amount: '0.00',
      total: '29.00',
      due_date: AS_OF,
      issued_at: AS_OF,
      period_start: AS_OF,
      period_end: AS_OF,
      created_at: AS_OF,
    }));
    await knex.transaction((trx) => trx('bench_invoice_ceiling').insert(rows));
  }
  return count / ((performance.now() - started) / 1000);
}

/**
 * Issue 35: `share` of the due subscriptions (10% by default, LIFECYCLE_BENCH_USAGE_SHARE) moved to a hybrid plan
 * with two usage charges (per_unit and graduated), each with usage in the period that closes, so their renewal
 * invoices carry two priced usage lines (one pending-usage read and one billing insert per batch).
 */
export async function giveUsageCharges(
  knex: Knex,
  share = Number(process.env.LIFECYCLE_BENCH_USAGE_SHARE ?? 0.1),
): Promise<number> {
  if (share <= 0) return 0;
  const metrics = await knex('billable_metrics')
    .insert([
      { code: 'bench_calls', name: 'API calls', aggregation: 'count' },
      { code: 'bench_gb', name: 'Storage', aggregation: 'max', field: 'gb' },
    ])
    .returning('id');
  const [product] = await knex('products')
    .insert({ name: 'Bench usage', product_type: 'api', price: '0' })
    .returning('id');
  const [plan] = await knex('plans')
    .insert({
      product_id: product.id,
      name: 'Bench hybrid',
      pricing_model: 'hybrid',
      billing_cycle: 'monthly',
      base_price: '29.00',
      currency: 'USD',
    })
    .returning('id');
  const tiers = [
    { upTo: '10', unitPrice: '0', flatFee: null },
    { upTo: null, unitPrice: '0.25', flatFee: '1.00' },
  ];
  const charges = await knex('plan_charges')
    .insert([
      { plan_id: plan.id, metric_id: metrics[0].id, position: 1, model: 'per_unit', unit_price: '0.0015' },
      { plan_id: plan.id, metric_id: metrics[1].id, position: 2, model: 'graduated', tiers: JSON.stringify(tiers) },
    ])
    .returning('id');
  const moved = await knex.raw(
    `with due as (select id from subscriptions where status = 'active'),
       chosen as (select id from due order by id limit (select ceil(count(*) * ?::numeric) from due))
     update subscriptions s set plan_id = ? from chosen where s.id = chosen.id returning s.id, s.customer_id`,
    [share, plan.id],
  );
  await knex.raw(
    `insert into usage_aggregates (customer_id, subscription_id, charge_id, period_start, period_end, aggregation,
       quantity, events)
     select s.customer_id, s.id, c.id, ?::timestamptz, ?::timestamptz + interval '1 month', c.aggregation,
       c.quantity, 1
     from subscriptions s
       cross join (values (?::uuid, 'count', 12345), (?::uuid, 'max', 42)) as c(id, aggregation, quantity)
     where s.plan_id = ?`,
    [ANCHOR, ANCHOR, charges[0].id, charges[1].id, plan.id],
  );
  await knex.raw('analyze subscriptions, usage_aggregates, plan_charges');
  return moved.rows.length;
}
