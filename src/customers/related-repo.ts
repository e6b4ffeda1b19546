/**
 * What a customer is linked to in tables that later migrations add (subscriptions, invoices,
 * payments, the credit ledger). Each query asks the catalog first (optional-tables.ts) and reads
 * a table only once it exists, so the customer routes work before and after those migrations.
 */
import type { Db } from '../db/knex.ts';
import { ledgerBalances } from '../credits/ledger-repo.ts';
import { existingColumns, hasAll } from '../db/optional-tables.ts';
import { formatMoney } from '../money.ts';

/** True when invoices or payments name the customer (D-22: such a customer cannot be deleted). */
export async function customerHasBillingHistory(db: Db, customerId: string): Promise<boolean> {
  const present = await existingColumns(db, ['invoices.customer_id', 'payments.customer_id']);
  // Only fixed table names from the list above reach the SQL text; the id is a binding.
  const tables = ['invoices', 'payments'].filter((t) => present.has(`${t}.customer_id`));
  if (tables.length === 0) return false;
  const checks = tables.map((t) => `exists (select 1 from ${t} where customer_id = ?)`);
  const result = await db.raw<{ rows: { found: boolean }[] }>(`select ${checks.join(' or ')} as found`, tables.map(() => customerId));
  return result.rows[0]?.found ?? false;
}

/** A subscriptions row as far as the customer read shows it (interface.md, Subscription). */
export interface SubscriptionRow {
  id: string;
  customer_id: string;
  plan_id: string;
  status: string;
  billing_cycle: string;
  current_period_start: Date;
  current_period_end: Date;
  cancel_at_period_end: boolean;
  trial_end: Date | null;
  created_at: Date;
}

/** The customer's subscriptions, oldest first; [] until the subscriptions table exists. */
export async function listCustomerSubscriptionRows(db: Db, customerId: string): Promise<SubscriptionRow[]> {
  const present = await existingColumns(db, ['subscriptions.customer_id', 'subscriptions.created_at']);
  if (!hasAll(present, 'subscriptions.customer_id', 'subscriptions.created_at')) return [];
  return db('subscriptions').where({ customer_id: customerId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('*');
}

/** The currency `creditBalance` is reported in; balances in other currencies appear in `creditBalances`. */
export const CREDIT_BALANCE_CURRENCY = 'USD';

/**
 * Each customer's store-credit balances by currency (D-22, D-57: derived from the credit ledger),
 * formatted to minor units, in one query for a page of customers.
 */
export async function customerCreditBalances(db: Db, customerIds: string[]): Promise<Map<string, Record<string, string>>> {
  const balances = new Map<string, Record<string, string>>(customerIds.map((id) => [id, {}]));
  for (const row of await ledgerBalances(db, customerIds)) {
    balances.get(row.customer_id)![row.currency] = formatMoney(row.balance, row.currency);
  }
  return balances;
}
