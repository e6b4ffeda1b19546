/**
 * The finance reports' reads (console.md C-16): open invoices by days past due, and money per calendar month. Read
 * only, set-wise: one statement per figure, grouped in the database (C-9: 100k invoices).
 */
import type { Db } from '../db/knex.ts';

/** What an invoice still owes, as pricing/amount-due.ts says it, for open invoices only. */
const OWED = 'greatest(total - amount_paid - credit_applied - credited_amount, 0)';

/** The aging buckets (C-16), by whole UTC days past the due date; an invoice without a due date is current. */
export const AGING_BUCKETS = ['current', '1-30', '31-60', '61-90', '90+'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

export interface AgingRow {
  currency: string;
  bucket: AgingBucket;
  count: number;
  amount: string;
}

/** Open (issued, overdue) invoices with something owed, per currency and bucket, as of `asOf`. */
export async function agingRows(db: Db, asOf: Date): Promise<AgingRow[]> {
  const result = await db.raw<{ rows: AgingRow[] }>(
    `select currency,
            case when late is null or late <= 0 then 'current'
                 when late <= 30 then '1-30'
                 when late <= 60 then '31-60'
                 when late <= 90 then '61-90'
                 else '90+' end as bucket,
            count(*)::int as count,
            sum(owed)::text as amount
       from (select currency, ${OWED} as owed,
                    ((:asOf::timestamptz at time zone 'UTC')::date - (due_date at time zone 'UTC')::date) as late
               from invoices
              where status in ('issued', 'overdue')) as open
      where owed > 0
      group by 1, 2`,
    { asOf },
  );
  return result.rows;
}

export interface MonthMoneyRow {
  /** `YYYY-MM` (UTC). */
  month: string;
  currency: string;
  invoiced: string;
  collected: string;
  refunded: string;
  credited: string;
}

/**
 * Per currency and month in [from, to): invoiced (totals of invoices issued in the month and not voided), collected
 * (payments by the day received, C-13), refunded (refunds made) and credited (credit notes issued).
 */
export async function moneyByMonth(db: Db, from: Date, to: Date): Promise<MonthMoneyRow[]> {
  const result = await db.raw<{ rows: MonthMoneyRow[] }>(
    `select to_char(at at time zone 'UTC', 'YYYY-MM') as month, currency,
            coalesce(sum(amount) filter (where kind = 'invoiced'), 0)::text as invoiced,
            coalesce(sum(amount) filter (where kind = 'collected'), 0)::text as collected,
            coalesce(sum(amount) filter (where kind = 'refunded'), 0)::text as refunded,
            coalesce(sum(amount) filter (where kind = 'credited'), 0)::text as credited
       from (select 'invoiced' as kind, issued_at as at, currency, total as amount from invoices
              where issued_at >= :from and issued_at < :to and status <> 'void'
             union all
             select 'collected', received_at, currency, amount from payments
              where received_at >= :from and received_at < :to
             union all
             select 'refunded', r.created_at, p.currency, r.amount from refunds r join payments p on p.id = r.payment_id
              where r.status = 'succeeded' and r.created_at >= :from and r.created_at < :to
             union all
             select 'credited', created_at, currency, amount from credit_notes
              where created_at >= :from and created_at < :to) as moves
      group by 1, 2`,
    { from, to },
  );
  return result.rows;
}
