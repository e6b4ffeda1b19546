/** What a customer is linked to in other domains' tables: subscriptions, invoices, payments, the credit ledger. */
import type { Db } from '../db/knex.ts';
import { ledgerBalances } from '../credits/ledger-repo.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { formatMoney } from '../money.ts';

/** True when invoices or payments name the customer (D-22: such a customer cannot be deleted). */
export async function customerHasBillingHistory(db: Db, customerId: string): Promise<boolean> {
  const result = await db.raw<{ rows: { found: boolean }[] }>(
    'select exists (select 1 from invoices where customer_id = ?) or exists (select 1 from payments where customer_id = ?) as found',
    [customerId, customerId],
  );
  return result.rows[0]?.found ?? false;
}

/** The customer's subscriptions, oldest first. */
export async function listCustomerSubscriptionRows(db: Db, customerId: string): Promise<SubscriptionRow[]> {
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
