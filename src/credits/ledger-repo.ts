import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export type LedgerKind = 'credit' | 'application' | 'credit_note' | 'proration';

export interface LedgerEntryRow {
  id: string;
  customer_id: string;
  currency: string;
  amount: string;
  kind: LedgerKind;
  description: string | null;
  invoice_id: string | null;
  credit_note_id: string | null;
  created_at: Date;
}

export type LedgerEntryInsert = Pick<LedgerEntryRow, 'customer_id' | 'currency' | 'amount' | 'kind'> &
  Partial<Pick<LedgerEntryRow, 'description' | 'invoice_id' | 'credit_note_id'>>;

export interface BalanceRow {
  customer_id: string;
  currency: string;
  balance: string;
}

/**
 * Entries in the order given, in one statement. Each takes clock_timestamp(), not the column's now(): entries
 * written in one transaction (a credit and its applications) get distinct, increasing times, so the ledger reads
 * in the order it was written.
 */
export async function insertLedgerEntries(db: Db, entries: LedgerEntryInsert[]): Promise<LedgerEntryRow[]> {
  if (entries.length === 0) return [];
  const result = await db.raw<{ rows: LedgerEntryRow[] }>(
    `insert into credit_ledger (customer_id, currency, amount, kind, description, invoice_id, credit_note_id,
                                created_at)
     select v.customer_id, v.currency, v.amount, v.kind, v.description, v.invoice_id, v.credit_note_id,
            clock_timestamp()
       from rows from (jsonb_to_recordset(?::jsonb) as (customer_id uuid, currency text, amount numeric, kind text,
            description text, invoice_id uuid, credit_note_id uuid)) with ordinality as v(customer_id, currency, amount,
            kind, description, invoice_id, credit_note_id, n)
      order by v.n
     returning *`,
    [JSON.stringify(entries)],
  );
  return result.rows;
}

/** Balances per customer and currency, in one query; a customer and currency without entries has no row. */
export async function ledgerBalances(db: Db, customerIds: string[]): Promise<BalanceRow[]> {
  if (customerIds.length === 0) return [];
  // One array parameter, not an IN list of hundreds (a sweep batch's customers): cheaper to build, send and parse.
  return db('credit_ledger')
    .whereRaw('customer_id = any(?::uuid[])', [customerIds])
    .groupBy('customer_id', 'currency')
    .select('customer_id', 'currency', db.raw('sum(amount)::text as balance'));
}

/**
 * Serialises balance changes of these customers until the transaction ends: every writer of the ledger takes its
 * customer's lock first, so two spenders can never both spend the same credit. Taken in id order, so two
 * transactions locking several customers never wait on each other in a cycle. Keyed by the id in lower case, as
 * PostgreSQL writes a uuid: a body may name the customer in capitals, and one customer must have one lock.
 *
 * Lock order: a transaction that locks invoice rows and this lock takes the invoice rows first (issue and void
 * lock their invoice, then this; store credits and credit notes lock the customer's open invoices oldest first,
 * then this). The year's invoice-number counter comes after this lock: issuing takes its numbers last
 * (invoices/issue.ts), so a plan change that credits the customer and then invoices the proration takes them in
 * the same order as any other issuing.
 */
export async function lockCustomerLedgers(db: Db, customerIds: string[]): Promise<void> {
  if (customerIds.length === 0) return;
  await db.raw(
    `select pg_advisory_xact_lock(hashtext('credit_ledger'), hashtext(ids.id))
       from (select distinct lower(u.id) as id from unnest(?::text[]) as u(id) order by 1) as ids`,
    [customerIds],
  );
}

export interface LedgerEntryWithBalance extends LedgerEntryRow {
  /** The balance in the entry's currency right after it. */
  balance_after: string;
}

/** Ledger entries in the order written, each with the running balance of its customer and currency. */
export function listLedgerEntryRows(
  db: Db,
  page: PageQuery,
  filters: { customerId?: string; currency?: string },
): Promise<Page<LedgerEntryWithBalance>> {
  // The running sum is taken over the customer's whole ledger before paging cuts it.
  const entries = db('credit_ledger').select(
    '*',
    db.raw('(sum(amount) over (partition by customer_id, currency order by created_at, id))::text as balance_after'),
  );
  if (filters.customerId) entries.where({ customer_id: filters.customerId });
  if (filters.currency) entries.where({ currency: filters.currency });
  return paginate<LedgerEntryWithBalance>(db.select('*').from(entries.as('credit_ledger')), 'credit_ledger', page);
}
