/**
 * The revenue read model: SQL over the billing tables (subscriptions, events, invoices, payments,
 * refunds, customers), aggregated in the database so the overview costs a few statements whatever the
 * data's size. Read only; the rules that price a subscription stay in TypeScript (service.ts).
 */
import { inTransaction, type Db } from '../db/knex.ts';
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
 * Every subscription's state at each point (docs/decisions.md, "Overview"), from its segments: the
 * subscription.* events cut its life into spans of one state each, the span of an event holding that
 * event's payload and the last span the row as it is now (so a subscription without events is its row
 * throughout). A subscription exists from its created_at, which follows the services' clock: its
 * creation event's state holds from then even when the event was recorded later (a seed or a test writing
 * the past). Coupon cycles are not in the payload: the cycles used now less those spent by period
 * invoices issued after the point (a cycle is spent by each period invoice while the coupon lasts, so
 * the first `coupon_cycles_used` period invoices are the ones that spent them).
 */
const STATES = `
  points as (select p.i::int as i, p.t from unnest(?::timestamptz[]) with ordinality as p(t, i)),
  sub_events as (
    select e.*, row_number() over w as n, lead(e.created_at) over w as until
      from (select (data->>'id')::uuid as sub_id, id, type, created_at,
                   data->>'status' as status, (data->>'planId')::uuid as plan_id, (data->>'couponId')::uuid as coupon_id
              from events
             where type in ('subscription.created', 'subscription.updated', 'subscription.canceled')) as e
    window w as (partition by e.sub_id order by e.created_at, e.id)
  ),
  segments as (
    select s.id, s.created_at, s.coupon_cycles_used,
           case when e.n = 1 and e.type = 'subscription.created' then s.created_at else e.created_at end as since,
           e.until,
           case when e.until is null then s.status else e.status end as status,
           case when e.until is null then s.plan_id else e.plan_id end as plan_id,
           case when e.until is null then s.coupon_id else e.coupon_id end as coupon_id
      from sub_events e join subscriptions s on s.id = e.sub_id
    union all
    select s.id, s.created_at, s.coupon_cycles_used, s.created_at, null, s.status, s.plan_id, s.coupon_id
      from subscriptions s
     where not exists (select 1 from sub_events e where e.sub_id = s.id)
  ),
  coupon_spends as (
    select subscription_id, spent_at
      from (select i.subscription_id, coalesce(i.issued_at, i.created_at) as spent_at, s.coupon_cycles_used,
                   row_number() over (partition by i.subscription_id order by coalesce(i.issued_at, i.created_at), i.id)
                     as n
              from invoices i join subscriptions s on s.id = i.subscription_id
             where s.coupon_id is not null and i.period_start is not null) as spends
     where n <= coupon_cycles_used and spent_at > (select min(t) from points)
  ),
  spent_after as (
    select p.i, c.subscription_id, count(*)::int as n
      from points p join coupon_spends c on c.spent_at > p.t
     group by p.i, c.subscription_id
  ),
  states as (
    select p.i, g.id, g.status, g.plan_id, g.coupon_id, g.coupon_cycles_used - coalesce(a.n, 0) as cycles_used
      from points p
      join segments g on p.t >= g.created_at and p.t >= g.since and (g.until is null or p.t < g.until)
      left join spent_after a on a.i = p.i and a.subscription_id = g.id
  )`;

/**
 * Runs a state query with room to sort in memory: it sorts every subscription event and one row per
 * subscription and point, a few MB at 10k subscriptions, which PostgreSQL's default 4 MB work_mem sends to
 * disk (about 2x slower). `set local` ends with the transaction.
 */
function withSortMemory<T>(db: Db, query: (trx: Db) => Promise<T>): Promise<T> {
  return inTransaction(db, async (trx) => {
    await trx.raw("set local work_mem = '32MB'");
    return query(trx);
  });
}

/** Subscriptions that bill or will (active, past_due, trialing) at each point, grouped by what prices them. */
export async function subscriptionStateGroups(db: Db, points: Date[]): Promise<StateGroup[]> {
  const result = await withSortMemory(db, (trx) =>
    trx.raw<{ rows: StateGroup[] }>(
      `with ${STATES}
     select i as point, status, plan_id, coupon_id, cycles_used, count(*)::int as count
       from states
      where status in ('active', 'past_due', 'trialing')
      group by i, status, plan_id, coupon_id, cycles_used`,
      [points],
    ),
  );
  return result.rows;
}

/** Subscriptions whose state at `before` and at `after` differ (movements compare only these). */
export async function subscriptionStateChanges(db: Db, before: Date, after: Date): Promise<StateChange[]> {
  const result = await withSortMemory(db, (trx) =>
    trx.raw<{ rows: StateChange[] }>(
      `with ${STATES}
     select coalesce(a.id, b.id) as id,
            b.status as status_before, b.plan_id as plan_before, b.coupon_id as coupon_before,
            coalesce(b.cycles_used, 0) as cycles_before,
            a.status as status_after, a.plan_id as plan_after, a.coupon_id as coupon_after,
            coalesce(a.cycles_used, 0) as cycles_after
       from (select * from states where i = 1) b
       full join (select * from states where i = 2) a on a.id = b.id
      where (b.status, b.plan_id, b.coupon_id, b.cycles_used)
            is distinct from (a.status, a.plan_id, a.coupon_id, a.cycles_used)`,
      [[before, after]],
    ),
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

// What is still owed on an invoice, as pricing/amount-due.ts amountDue computes it (never below zero).
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
    .select(
      'i.id',
      'i.invoice_number',
      'i.customer_id',
      'c.name as customer_name',
      'i.currency',
      'i.status',
      'i.total',
      'i.amount_paid',
      'i.credit_applied',
      'i.credited_amount',
      'i.due_date',
    );
}
