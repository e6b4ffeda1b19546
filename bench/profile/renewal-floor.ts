/**
 * Profiling aid for issue 20 (not part of `npm run bench`): the floor under the lifecycle bench's ratio. Seeds
 * FLOOR_COUNT (100,000) due subscriptions like bench/lifecycle-sweep.ts, measures its raw invoice-insert ceiling the
 * same way, then writes what a renewal writes with no Node work at all: one SQL statement per batch of 500 claims
 * the subscriptions, advances them and inserts each one's invoice, line, invoice.created event (its payload built
 * in SQL), pending webhook delivery and audit row, every table with its real indexes, constraints and foreign keys.
 * It takes no gapless number (a sequence stands in) and no store credit, parses no JSON input and plans nothing in
 * Node, so no implementation of the renewal can beat it on this machine: it is the best ratio the rows themselves allow.
 * Runs it on 1, 2 and 3 connections (FLOOR_CONNECTIONS, comma-separated) and prints each rate beside the ceiling,
 * with PostgreSQL's CPU per renewal (compare bench/profile/renewal-steps.ts, the service's renewals).
 */
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex.ts';
import { cleanUp, onCleanup, startBenchDatabase } from '../harness.ts';
import { seedRows } from '../fixtures.ts';
import { AS_OF, rawInvoiceInserts, seedDueSubscriptions } from '../lifecycle-sweep.ts';
import { cpuOf, serverPids } from '../proc-cpu.ts';

const COUNT = Number(process.env.FLOOR_COUNT ?? 100_000);
const CONNECTIONS = (process.env.FLOOR_CONNECTIONS ?? '1,2,3').split(',').map(Number);
const BATCH = 500;

const renewBatchSql = (endpointId: string) => `
  with s as (
    select id from subscriptions
     where status in ('active', 'trialing', 'past_due') and current_period_end <= :asOf
     order by current_period_end, id limit ${BATCH} for update skip locked),
  u as (
    update subscriptions x set period_number = x.period_number + 1, current_period_start = x.current_period_end,
           current_period_end = x.current_period_end + interval '1 month', updated_at = now()
      from s where x.id = s.id
    returning x.id, x.customer_id, x.period_number, x.current_period_start, x.current_period_end),
  inv as (
    insert into invoices (id, customer_id, subscription_id, invoice_number, status, currency, tax_rate, subtotal, tax_amount, total,
                          due_date, issued_at, period_start, period_end)
    select uuidv7(), u.customer_id, u.id, 'FLOOR-' || nextval('floor_numbers'), 'issued', 'USD', 0, 29, 0, 29,
           now() + interval '30 days', now(), u.current_period_start, u.current_period_end
      from u
    returning id, customer_id, subscription_id, invoice_number, due_date),
  lines as (
    insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount)
    select id, 1, 'Bench plan (monthly)', 1, 29, 29 from inv),
  ev as (
    insert into events (id, type, data)
    select 'evt_' || substr(md5(random()::text), 1, 24), 'invoice.created',
           jsonb_build_object('invoiceId', id, 'invoiceNumber', invoice_number, 'customerId', customer_id, 'subscriptionId', subscription_id,
                              'amount', '29.00', 'amountDue', '29.00', 'currency', 'USD', 'status', 'issued', 'dueDate', due_date)
      from inv
    returning id),
  deliveries as (
    insert into webhook_deliveries (endpoint_id, event_id) select '${endpointId}', id from ev),
  audit as (
    insert into audit_log (actor, action, target_type, target_id, before, after)
    select 'system', 'subscription.renew', 'subscription', u.id::text,
           jsonb_build_object('status', 'active', 'period_number', u.period_number - 1, 'current_period_start', u.current_period_start - interval '1 month',
                              'current_period_end', u.current_period_start, 'cancel_at_period_end', false, 'canceled_at', null, 'coupon_cycles_used', 0),
           jsonb_build_object('status', 'active', 'period_number', u.period_number, 'current_period_start', u.current_period_start,
                              'current_period_end', u.current_period_end, 'cancel_at_period_end', false, 'canceled_at', null, 'coupon_cycles_used', 0,
                              'invoice_ids', jsonb_build_array(inv.id))
      from u join inv on inv.subscription_id = u.id)
  select count(*)::int as n from u`;

/** Renews every due subscription with `connections` loops of renewBatchSql; answers renewals/s and PostgreSQL's CPU per renewal (µs). */
async function renewInSql(knex: Knex, endpointId: string, connections: number): Promise<{ rate: number; cpuMicros: number }> {
  let renewed = 0;
  const pids = await serverPids(knex);
  const cpuBefore = cpuOf(pids);
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, async () => {
    for (;;) {
      const n = await knex.transaction(async (trx) => (await trx.raw(renewBatchSql(endpointId), { asOf: AS_OF })).rows[0].n as number);
      renewed += n;
      if (n === 0) return;
    }
  }));
  const rate = renewed / ((performance.now() - started) / 1000);
  const cpu = cpuOf([...new Set([...pids, ...(await serverPids(knex))])]) - cpuBefore;
  return { rate, cpuMicros: (cpu * 1e6) / renewed };
}

async function main(): Promise<void> {
  const knex = createKnex(await startBenchDatabase(), 4);
  onCleanup(() => knex.destroy());
  const { customerIds, planIds } = await seedRows(knex);
  const [endpoint] = await knex('webhook_endpoints')
    .insert({ url: 'https://receiver.bench.invalid/hook', events: ['invoice.created'], secret: 'whsec_bench_secret_0123456789abcdef' })
    .returning('id');
  await knex.raw('create sequence floor_numbers');
  const ceiling = await rawInvoiceInserts(knex, customerIds, COUNT);
  await knex.raw('drop table bench_invoice_ceiling');
  console.log(`renewal floor: ${COUNT} due subscriptions, batches of ${BATCH}; raw invoice-insert ceiling ${ceiling.toFixed(0)} rows/s`);
  for (const connections of CONNECTIONS) {
    // Each round starts from the same state: the subscriptions due again, last round's rows gone.
    await knex.raw('delete from webhook_deliveries; delete from events; delete from invoice_line_items; alter table audit_log disable trigger audit_log_append_only; delete from audit_log; alter table audit_log enable trigger audit_log_append_only');
    await knex.raw(`delete from invoices where invoice_number like 'FLOOR-%'`);
    await knex.raw(`delete from subscriptions where status <> 'canceled'`);
    await seedDueSubscriptions(knex, customerIds, planIds, COUNT);
    await knex.raw('vacuum analyze subscriptions, invoices, invoice_line_items, events, webhook_deliveries, audit_log');
    const { rate, cpuMicros } = await renewInSql(knex, endpoint.id, connections);
    console.log(`  ${connections} connection(s): ${rate.toFixed(0)} renewals/s   ratio ${(rate / ceiling).toFixed(2)}   PostgreSQL CPU ${cpuMicros.toFixed(0)} µs per renewal`);
  }
}

try {
  await main();
} finally {
  await cleanUp();
}
process.exit(0);
