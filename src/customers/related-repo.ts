/**
 * What a customer is linked to in tables that later migrations add (subscriptions, invoices,
 * payments, the credit ledger). Each query asks the catalog first (optional-tables.ts) and reads
 * a table only once it exists, so the customer routes work before and after those migrations.
 */
import type { Db } from '../db/knex.ts';
import { existingColumns, hasAll } from '../products/optional-tables.ts';

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

/**
 * Each customer's credit balance as a decimal string (D-22, D-57: derived from the credit ledger).
 * The ledger does not exist yet, so every balance is "0.00"; the credits work replaces the body of
 * this function with one set-wise query over the ledger, and every caller follows.
 */
export async function customerCreditBalances(_db: Db, customerIds: string[]): Promise<Map<string, string>> {
  return new Map(customerIds.map((id) => [id, '0.00']));
}
