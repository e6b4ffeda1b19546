import type { Db } from '../db/knex.ts';

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

export async function insertLedgerEntry(
  db: Db,
  entry: { customer_id: string; currency: string; amount: string; kind: LedgerKind; description?: string | null; invoice_id?: string | null; credit_note_id?: string | null },
): Promise<LedgerEntryRow> {
  const [row] = await db('credit_ledger').insert(entry).returning('*');
  return row as LedgerEntryRow;
}

/** The customer's balance in one currency, as a decimal string. */
export async function ledgerBalance(db: Db, customerId: string, currency: string): Promise<string> {
  const row = await db('credit_ledger').where({ customer_id: customerId, currency }).sum<{ balance: string | null }>('amount as balance').first();
  return row?.balance ?? '0';
}

/** Balances per customer and currency for a page of customers, in one query. */
export async function ledgerBalances(db: Db, customerIds: string[]): Promise<{ customer_id: string; currency: string; balance: string }[]> {
  if (customerIds.length === 0) return [];
  return db('credit_ledger').whereIn('customer_id', customerIds).groupBy('customer_id', 'currency').select('customer_id', 'currency', db.raw('sum(amount)::text as balance'));
}

/**
 * Serialises balance changes of one customer: every writer of the ledger takes this lock first, so
 * two applications can never both spend the same credit.
 */
export async function lockCustomerLedger(db: Db, customerId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', ['credit_ledger', customerId]);
}
