/**
 * The revenue read model: SQL over the billing tables (subscriptions, events, invoices, payments,
 * refunds, customers), aggregated in the database so the overview costs a few statements whatever the
 * data's size. Read only; the rules that price a subscription stay in TypeScript (service.ts).
 */
import type { Db } from '../db/knex.ts';
import type { SubscriptionStatus } from '../subscriptions/repo.ts';

/** One kind of subscription at one point in time: what prices its contribution, and how many there are. */
export interface StateGroup {
  point: number;
  status: SubscriptionStatus;
  plan_id: string;
  coupon_id: string | null;
  cycles_used: number;
  count: number;
}

/** A subscription whose pricing state differs between two points. */
export interface StateChange {
  id: string;
  status_before: SubscriptionStatus | null;
  plan_before: string | null;
  coupon_before: string | null;
  cycles_before: number;
  status_after: SubscriptionStatus | null;
  plan_after: string | null;
  coupon_after: string | null;
  cycles_after: number;
}

/**
 * Every subscription's state at each point (docs/decisions.md, "Overview"): the row as it is now, unless
 * a subscription.* event was recorded after the point, in which case the state that event replaced (the
 * payload of the event before it). A subscription exists from its created_at (which follows the services'
 * clock); when its creation event was recorded later than that (a seed or a test writing the past), its
 * state until then is the one it was created with.
 * Coupon cycles are not in the payload: at a point, a subscription had used one per period invoice issued
 * by then, up to the number it has used now (cycles are spent by period invoices only, in order).
 */
const STATES = `
  points as (select p.i::int as i, p.t from unnest(?::timestamptz[]) with ordinality as p(t, i)),
  sub_events as (
    select e.data->>'id' as sub_id, e.created_at,
           lag(e.created_at) over w as prev_at,
           case when e.type = 'subscription.created' then e.data else lag(e.data) over w end as prev
      from events e
     where e.type in ('subscription.created', 'subscription.updated', 'subscription.canceled')
    window w as (partition by e.data->>'id' order by e.created_at, e.id)
  ),
  replaced as (
    select p.i, se.sub_id, se.prev
      from points p join sub_events se on se.created_at > p.t and (se.prev_at is null or se.prev_at <= p.t)
  ),
  coupon_invoices as (
    select p.i, inv.subscription_id,
           count(*) filter (where coalesce(inv.issued_at, inv.created_at) <= p.t)::int as before,
           count(*) filter (where coalesce(inv.issued_at, inv.created_at) > p.t)::int as after
      from points p
      join invoices inv on inv.period_start is not null
     where inv.subscription_id in (select id from subscriptions where coupon_id is not null)
     group by p.i, inv.subscription_id
  ),
  states as (
    select p.i, s.id,
           case when r.sub_id is null then s.status else r.prev->>'status' end as status,
           case when r.sub_id is null then s.plan_id else (r.prev->>'planId')::uuid end as plan_id,
           case when r.sub_id is null then s.coupon_id else (r.prev->>'couponId')::uuid end as coupon_id,
           case when coalesce(ci.after, 0) = 0 then s.coupon_cycles_used
                else least(s.coupon_cycles_used, ci.before) end as cycles_used
      from points p
      join subscriptions s on s.created_at <= p.t
      left join replaced r on r.i = p.i and r.sub_id = s.id::text
      left join coupon_invoices ci on ci.i = p.i and ci.subscription_id = s.id
  )`;

/** Subscriptions that bill or will (active, past_due, trialing) at each point, grouped by what prices them. */
export async function subscriptionStateGroups(db: Db, points: Date[]): Promise<StateGroup[]> {
  const result = await db.raw<{ rows: StateGroup[] }>(
    `with ${STATES}
     select i as point, status, plan_id, coupon_id, cycles_used, count(*)::int as count
       from states
      where status in ('active', 'past_due', 'trialing')
      group by i, status, plan_id, coupon_id, cycles_used`,
    [points],
  );
  return result.rows;
}

/** Subscriptions whose state at `before` and at `after` differ (movements compare only these). */
export async function subscriptionStateChanges(db: Db, before: Date, after: Date): Promise<StateChange[]> {
  const result = await db.raw<{ rows: StateChange[] }>(
    `with ${STATES}
     select coalesce(a.id, b.id) as id,
            b.status as status_before, b.plan_id as plan_before, b.coupon_id as coupon_before, coalesce(b.cycles_used, 0) as cycles_before,
            a.status as status_after, a.plan_id as plan_after, a.coupon_id as coupon_after, coalesce(a.cycles_used, 0) as cycles_after
       from (select * from states where i = 1) b
       full join (select * from states where i = 2) a on a.id = b.id
      where (b.status, b.plan_id, b.coupon_id, b.cycles_used) is distinct from (a.status, a.plan_id, a.coupon_id, a.cycles_used)`,
    [[before, after]],
  );
  return result.rows;
}

export interface CurrencyAmount {
  currency: string;
  amount: string;
}

export interface ReceivableRow {
  currency: string;
  outstanding: string;
  overdue_amount: string;
  overdue_count: number;
}

// What is still owed on an invoice, as invoices/amounts.ts amountDue computes it (never below zero).
const AMOUNT_DUE = 'greatest(total - amount_paid - credit_applied - credited_amount, 0)';

/** Open receivables per currency: amount due on issued and overdue invoices, and the overdue part. */
export async function receivables(db: Db): Promise<ReceivableRow[]> {
  const result = await db.raw<{ rows: ReceivableRow[] }>(
    `select currency,
            sum(${AMOUNT_DUE})::text as outstanding,
            coalesce(sum(${AMOUNT_DUE}) filter (where status = 'overdue'), 0)::text as overdue_amount,
            count(*) filter (where status = 'overdue')::int as overdue_count
       from invoices
      where status in ('issued', 'overdue')
      group by currency`,
  );
  return result.rows;
}

export interface MonthAmount extends CurrencyAmount {
  month: string;
}

/** Payments less refunds per currency and calendar month (UTC, `YYYY-MM`) in [from, to). */
export async function collectedByMonth(db: Db, from: Date, to: Date): Promise<MonthAmount[]> {
  const result = await db.raw<{ rows: MonthAmount[] }>(
    `select to_char(at at time zone 'UTC', 'YYYY-MM') as month, currency, sum(amount)::text as amount
       from (select created_at as at, currency, amount from payments where created_at >= :from and created_at < :to
             union all
             select r.created_at, p.currency, -r.amount
               from refunds r join payments p on p.id = r.payment_id
              where r.status = 'succeeded' and r.created_at >= :from and r.created_at < :to) as movements
      group by 1, 2`,
    { from, to },
  );
  return result.rows;
}

export interface OverdueInvoiceRow {
  id: string;
  invoice_number: string;
  customer_id: string;
  customer_name: string;
  currency: string;
  status: 'overdue';
  total: string;
  amount_paid: string;
  credit_applied: string;
  credited_amount: string;
  due_date: Date;
}

/** The `limit` overdue invoices with the oldest due dates, with their customer's name. */
export async function mostOverdueInvoices(db: Db, limit: number): Promise<OverdueInvoiceRow[]> {
  return db('invoices as i')
    .join('customers as c', 'c.id', 'i.customer_id')
    .where('i.status', 'overdue')
    .orderBy([{ column: 'i.due_date' }, { column: 'i.invoice_number' }])
    .limit(limit)
    .select('i.id', 'i.invoice_number', 'i.customer_id', 'c.name as customer_name', 'i.currency', 'i.status', 'i.total', 'i.amount_paid', 'i.credit_applied', 'i.credited_amount', 'i.due_date');
}
