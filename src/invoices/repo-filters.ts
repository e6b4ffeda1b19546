/** Narrower reads of invoices for the finance reports (issue 34), beside repo.ts's list. */
import type { Knex } from 'knex';
import { firstRowsOf, overCap } from '../db/capped.ts';
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

/**
 * pricing/amount-due.ts's rule in SQL, for the list's column order and its totals (one rule: the totals are the sum
 * of the column): nothing on a paid or void invoice, never below zero.
 */
export const AMOUNT_DUE_SQL = `(case when status in ('paid', 'void') then 0
  else greatest(total - amount_paid - credit_applied - credited_amount, 0) end)`;

export interface CurrencyTotalRow {
  currency: string;
  count: number;
  total: string;
  due: string;
}

/**
 * Count, totals and amount due per currency of the invoices a list's filters keep (C-15); undefined when more than
 * `cap` match (db/capped.ts).
 */
export async function invoiceTotalRows(
  db: Db,
  filtered: Knex.QueryBuilder,
  cap: number,
): Promise<CurrencyTotalRow[] | undefined> {
  const columns = ['currency', 'status', 'total', 'amount_paid', 'credit_applied', 'credited_amount'];
  const rows: CurrencyTotalRow[] = await firstRowsOf(db, filtered, columns, cap)
    .select('currency')
    .count({ count: '*' })
    .select(db.raw('sum(total)::text as total'), db.raw(`sum(${AMOUNT_DUE_SQL})::text as due`))
    .groupBy('currency')
    .orderBy('currency');
  return overCap(rows, cap) ? undefined : rows;
}
