/**
 * The floor under the lifecycle bench's ratio (issue 20): what a renewal writes, with no Node work at all. One SQL
 * statement per batch of 500 claims the due subscriptions, advances them and inserts each one's invoice, line,
 * invoice.created event (its payload built in SQL), pending webhook delivery and audit row, every table with its
 * real indexes, constraints and foreign keys. It takes no gapless number (a sequence stands in) and no store credit,
 * parses no JSON input and plans nothing in Node, so no implementation of the renewal that writes the same rows can
 * beat it on the same machine: it is the best rate those rows allow.
 */
import type { Knex } from 'knex';
import { cpuOf, serverPids } from './proc-cpu.ts';
import { AS_OF, seedDueSubscriptions } from './lifecycle-fixtures.ts';

export const FLOOR_BATCH = 500;

const renewBatchSql = (endpointId: string) => `
  with s as (
    select id from subscriptions
     where status in ('active', 'trialing', 'past_due') and current_period_end <= :asOf
     order by current_period_end, id limit ${FLOOR_BATCH} for update skip locked),
  u as (
    update subscriptions x set period_number = x.period_number + 1, current_period_start = x.current_period_end,
           current_period_end = x.current_period_end + interval '1 month', updated_at = now()
      from s where x.id = s.id
    returning x.id, x.customer_id, x.period_number, x.current_period_start, x.current_period_end),
  inv as (
    insert into invoices (id, customer_id, subscription_id, invoice_number, status, currency, tax_rate, subtotal,
      tax_amount, total,
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
           jsonb_build_object('invoiceId', id, 'invoiceNumber', invoice_number, 'customerId', customer_id,
             'subscriptionId', subscription_id,
                              'amount', '29.00', 'amountDue', '29.00', 'currency', 'USD', 'status', 'issued', 'dueDate',
                                due_date)
      from inv
    returning id),
  deliveries as (
    insert into webhook_deliveries (endpoint_id, event_id) select '${endpointId}', id from ev),
  audit as (
    insert into audit_log (actor, action, target_type, target_id, before, after)
    select 'system', 'subscription.renew', 'subscription', u.id::text,
           jsonb_build_object('status', 'active', 'period_number', u.period_number - 1, 'current_period_start',
             u.current_period_start - interval '1 month',
                              'current_period_end', u.current_period_start, 'cancel_at_period_end', false,
                                'canceled_at', null, 'coupon_cycles_used', 0),
           jsonb_build_object('status', 'active', 'period_number', u.period_number, 'current_period_start',
             u.current_period_start,
                              'current_period_end', u.current_period_end, 'cancel_at_period_end', false, 'canceled_at',
                                null, 'coupon_cycles_used', 0,
                              'invoice_ids', jsonb_build_array(inv.id))
      from u join inv on inv.subscription_id = u.id)
  select count(*)::int as n from u`;

export interface FloorSetUp {
  customerIds: string[];
  planIds: string[];
  /** The enabled endpoint subscribed to invoice.created that every event is delivered to. */
  endpointId: string;
  count: number;
}

export interface Floor {
  renewalsPerSecond: number;
  /** CPU of every PostgreSQL process the bench's connection sees, per renewal. */
  postgresMicros: number;
}

/**
 * Starts from `count` due subscriptions again: every subscription that is not canceled (the seeded due ones, the
 * fixtures' history is canceled) goes, with its invoices, their lines, every event and delivery and the renewals'
 * audit rows, and `count` are seeded anew; then vacuumed and analyzed, as between the floor's rounds.
 */
async function dueAgain(knex: Knex, setUp: FloorSetUp): Promise<void> {
  await knex.raw('delete from webhook_deliveries; delete from events');
  await knex.raw(
    `delete from invoices where subscription_id in (select id from subscriptions where status <> 'canceled')`,
  );
  await knex.raw(`alter table audit_log disable trigger audit_log_append_only;
                  delete from audit_log where target_type = 'subscription';
                  alter table audit_log enable trigger audit_log_append_only`);
  await knex.raw(`delete from subscriptions where status <> 'canceled'`);
  await seedDueSubscriptions(knex, setUp.customerIds, setUp.planIds, setUp.count);
  await knex.raw('vacuum analyze subscriptions, invoices, invoice_line_items, events, webhook_deliveries, audit_log');
}

/**
 * Renews `setUp.count` due subscriptions (seeded anew by dueAgain) with `connections` loops of the floor's statement,
 * each batch its own transaction. Destroys whatever the bench wrote for subscriptions before: measure it last.
 */
export async function measureRenewalFloor(knex: Knex, setUp: FloorSetUp, connections: number): Promise<Floor> {
  await knex.raw('create sequence if not exists floor_numbers');
  await dueAgain(knex, setUp);
  let renewed = 0;
  const pids = await serverPids(knex);
  const cpuBefore = cpuOf(pids);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (;;) {
        const n = await knex.transaction(
          async (trx) => (await trx.raw(renewBatchSql(setUp.endpointId), { asOf: AS_OF })).rows[0].n as number,
        );
        renewed += n;
        if (n === 0) return;
      }
    }),
  );
  const renewalsPerSecond = renewed / ((performance.now() - started) / 1000);
  const cpu = cpuOf([...new Set([...pids, ...(await serverPids(knex))])]) - cpuBefore;
  if (renewed !== setUp.count) throw new Error(`the floor renewed ${renewed} of ${setUp.count} subscriptions`);
  return { renewalsPerSecond, postgresMicros: (cpu * 1e6) / renewed };
}
