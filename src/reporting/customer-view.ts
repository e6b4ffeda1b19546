/**
 * The customer as the API and the console show it (D-22): the row, with its products, its store credit per
 * currency and its health score, all derived on read from the domains that own them, set-wise per page; the
 * detail adds the customer's subscriptions.
 */
import { creditBalances } from '../credits/ledger.ts';
import type { CustomerRow } from '../customers/repo.ts';
import {
  type CustomerListFilters,
  customerRowBatches,
  findCustomer,
  findCustomers,
  searchCustomers as searchCustomerRows,
} from '../customers/service.ts';
import type { Db } from '../db/knex.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { formatMoney } from '../money.ts';
import { listProductsOfCustomerIds } from '../products/service.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { customerHealthScores, listCustomerSubscriptionRows, storeHealthScores } from './customer-repo.ts';
import type { CustomerRecord } from './customer-schema.ts';

/** The currency `creditBalance` is reported in; balances in other currencies appear in `creditBalances`. */
const CREDIT_BALANCE_CURRENCY = 'USD';

/**
 * Each customer's store-credit balances by currency (D-22, D-57: derived from the credit ledger),
 * formatted to minor units, in one query for a page of customers.
 */
export async function customerCreditBalances(
  db: Db,
  customerIds: string[],
): Promise<Map<string, Record<string, string>>> {
  const balances = new Map<string, Record<string, string>>(customerIds.map((id) => [id, {}]));
  for (const row of await creditBalances(db, customerIds)) {
    balances.get(row.customer_id)![row.currency] = formatMoney(row.balance, row.currency);
  }
  return balances;
}

/**
 * Adds what the answers derive from other tables, set-wise per page: products (D-22), the credit balance,
 * and the health score as of now (D-22), so it is right at once after the change that moves it.
 */
async function withDerived(db: Db, rows: CustomerRow[]): Promise<CustomerRecord[]> {
  const ids = rows.map((r) => r.id);
  const [products, balances, scores] = await Promise.all([
    listProductsOfCustomerIds(db, ids),
    customerCreditBalances(db, ids),
    customerHealthScores(db, ids),
  ]);
  return rows.map((row) => ({
    ...row,
    health_score: scores.get(row.id) ?? row.health_score,
    creditBalance: balances.get(row.id)?.[CREDIT_BALANCE_CURRENCY] ?? formatMoney('0', CREDIT_BALANCE_CURRENCY),
    creditBalances: balances.get(row.id) ?? {},
    products: products.filter((p) => p.customer_id === row.id),
  }));
}

/** One customer as the answers show it. */
export async function customerRecord(db: Db, row: CustomerRow): Promise<CustomerRecord> {
  const [record] = await withDerived(db, [row]);
  return record!;
}

/**
 * A customer this very request created: nothing links to it yet (no license, subscription, ledger entry,
 * invoice or event can name an id not yet answered), so what `withDerived` would read is known: no products,
 * no credit, and the health score's full 100 (D-22), which is also the column's default.
 */
export function newCustomerRecord(row: CustomerRow): CustomerRecord {
  return { ...row, creditBalance: formatMoney('0', CREDIT_BALANCE_CURRENCY), creditBalances: {}, products: [] };
}

export async function listCustomers(
  db: Db,
  page: PageQuery,
  filters: CustomerListFilters = {},
): Promise<Page<CustomerRecord>> {
  const { rows, hasMore } = await findCustomers(db, page, filters);
  return { rows: await withDerived(db, rows), hasMore };
}

/** D-23: every word of `text` must prefix-match a word of the name, company or email; best match first. */
export async function searchCustomers(db: Db, text: string): Promise<CustomerRecord[]> {
  return withDerived(db, await searchCustomerRows(db, text));
}

export async function getCustomer(
  db: Db,
  id: string,
): Promise<{ customer: CustomerRecord; subscriptions: SubscriptionRow[] }> {
  const row = await findCustomer(db, id);
  const [customer, subscriptions] = await Promise.all([customerRecord(db, row), listCustomerSubscriptionRows(db, id)]);
  return { customer, subscriptions };
}

/** A customer as an export lists it: the row and its credit balances, without a page's other extras. */
export interface CustomerWithBalances extends CustomerRow {
  creditBalances: Record<string, string>;
}

/**
 * Every customer the filters match, newest first, in keyset batches of `size`, so an export streams any
 * number of them with bounded memory and one query per batch for the balances.
 */
export async function* customerBatches(
  db: Db,
  filters: CustomerListFilters,
  size = 1000,
): AsyncGenerator<CustomerWithBalances[]> {
  for await (const rows of customerRowBatches(db, filters, size)) {
    const balances = await customerCreditBalances(
      db,
      rows.map((r) => r.id),
    );
    yield rows.map((row) => ({ ...row, creditBalances: balances.get(row.id) ?? {} }));
  }
}

/** Refreshes the stored health score snapshot (the lifecycle sweep); answers how many changed. */
export function refreshHealthScores(db: Db, at: Date): Promise<number> {
  return storeHealthScores(db, at);
}
