/** Narrower reads of invoices for the finance reports (issue 34), beside repo.ts's list. */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';

/** Open (issued, overdue) invoices owing something, in a currency, due in [dueFrom, dueBefore); undated ones too. */
export interface AgingFilter {
  currency?: string;
  dueFrom?: Date;
  dueBefore?: Date;
  /** An invoice without a due date is never late: it belongs to the `current` bucket. */
  undated?: boolean;
}

export function agingFilter(query: Knex.QueryBuilder, { currency, dueFrom, dueBefore, undated }: AgingFilter): void {
  query.whereIn('status', ['issued', 'overdue']).whereRaw('total - amount_paid - credit_applied - credited_amount > 0');
  if (currency) query.where({ currency });
  query.where((q) => {
    q.where((dated) => {
      if (dueFrom) dated.where('due_date', '>=', dueFrom);
      if (dueBefore) dated.where('due_date', '<', dueBefore);
      dated.whereNotNull('due_date');
    });
    if (undated) q.orWhereNull('due_date');
  });
}

/** The currencies the customer has invoices in (C-14). */
export async function customerCurrencyRows(db: Db, customerId: string): Promise<string[]> {
  const rows = await db('invoices').distinct('currency').where({ customer_id: customerId });
  return rows.map((r: { currency: string }) => r.currency);
}

/** Invoices whose number starts with `prefix` (case-insensitive: numbers are upper case), newest first (C-15). */
export function invoiceRowsByNumber(db: Db, prefix: string, limit: number) {
  const escaped = prefix.toUpperCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return db('invoices')
    .where('invoice_number', 'like', `${escaped}%`)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .select('*');
}

export interface CurrencyTotalRow {
  currency: string;
  count: number;
  total: string;
  due: string;
}

/** Count, totals and amount due per currency of the invoices a list's filters keep (C-15). */
export function invoiceTotalRows(filtered: Knex.QueryBuilder): Promise<CurrencyTotalRow[]> {
  return filtered
    .clone()
    .clearSelect()
    .select('currency')
    .count({ count: '*' })
    .select(
      filtered.client.raw('sum(total)::text as total'),
      filtered.client.raw(
        `sum(case when status in ('issued', 'overdue')
                  then greatest(total - amount_paid - credit_applied - credited_amount, 0) else 0 end)::text as due`,
      ),
    )
    .groupBy('currency')
    .orderBy('currency') as unknown as Promise<CurrencyTotalRow[]>;
}
