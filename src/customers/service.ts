import { newUuid } from '../crypto/ids.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { Page } from '../db/paginate.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { listProductsOfCustomerIds } from '../products/service.ts';
import { formatMoney } from '../money.ts';
import { creditBalances } from '../credits/ledger.ts';
import {
  customerHasBillingHistory,
  customerHealthScores,
  listCustomerSubscriptionRows,
  storeHealthScores,
} from './related-repo.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import {
  deleteCustomerRow,
  findCustomerNameRows,
  EMAIL_UNIQUE_INDEX,
  findCustomerRow,
  insertCustomerRowWith,
  listCustomerRows,
  lockCustomerRow,
  searchCustomerRows,
  updateCustomerRow,
  type CustomerCreate,
  type CustomerFilters,
  type CustomerRow,
  type CustomerWrite,
} from './repo.ts';
import type { CreateCustomerInput, CustomerRecord, UpdateCustomerInput } from './schema.ts';
import { prefixTsquery } from './search-query.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Actor } from '../audit/actor.ts';
import { auditInsertPart, recordAudit } from '../audit/service.ts';

/** The currency `creditBalance` is reported in; balances in other currencies appear in `creditBalances`. */
const CREDIT_BALANCE_CURRENCY = 'USD';

/**
 * Each customer's store-credit balances by currency (D-22, D-57: derived from the credit ledger),
 * formatted to minor units, in one query for a page of customers.
 */
async function customerCreditBalances(db: Db, customerIds: string[]): Promise<Map<string, Record<string, string>>> {
  const balances = new Map<string, Record<string, string>>(customerIds.map((id) => [id, {}]));
  for (const row of await creditBalances(db, customerIds)) {
    balances.get(row.customer_id)![row.currency] = formatMoney(row.balance, row.currency);
  }
  return balances;
}

/** Refreshes the stored health score snapshot (the lifecycle sweep); answers how many changed. */
export function refreshHealthScores(db: Db, at: Date): Promise<number> {
  return storeHealthScores(db, at);
}

/** A body's customerId that names no customer (D-2). */
export const customerNotFound = (id: string, path = 'customerId') =>
  new AppError('customer_not_found', `Customer ${id} does not exist`, {
    details: [{ path, message: 'no such customer' }],
  });

/** Throws customer_not_found unless the customer exists (for other domains that take a customerId). */
export async function assertCustomerExists(db: Db, id: string, path = 'customerId'): Promise<void> {
  if (!(await findCustomerRow(db, id))) throw customerNotFound(id, path);
}

/** Request fields to columns; absent fields stay absent so an update changes only what was sent. */
function toColumns(input: UpdateCustomerInput): CustomerWrite {
  const columns: CustomerWrite = {
    name: input.name,
    email: input.email,
    company: input.company,
    tier: input.tier,
    billing_address: input.billingAddress,
    tax_id: input.taxId,
    payment_method: input.paymentMethod,
  };
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined)) as CustomerWrite;
}

/** The unique index on lower(email) is the real guard (D-22): a check-then-insert would race. */
async function withEmailUniqueness<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, EMAIL_UNIQUE_INDEX)) {
      throw new AppError('email_taken', 'Another customer already uses this email address', {
        details: [{ path: 'email', message: 'is already used by another customer' }],
      });
    }
    throw error;
  }
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

async function one(db: Db, row: CustomerRow): Promise<CustomerRecord> {
  const [record] = await withDerived(db, [row]);
  return record!;
}

/** A customer's fields as the audit log records them: what an admin can change. */
function audited(row: CustomerCreate): Record<string, unknown> {
  const { name, email, company, tier, billing_address, tax_id, payment_method } = row;
  return { name, email, company, tier, billing_address, tax_id, payment_method };
}

export async function createCustomer(db: Db, input: CreateCustomerInput, actor: Actor): Promise<CustomerRecord> {
  const columns: CustomerCreate = {
    id: newUuid(),
    name: input.name,
    email: input.email,
    company: input.company ?? null,
    tier: input.tier ?? null,
    billing_address: input.billingAddress ?? null,
    tax_id: input.taxId ?? null,
    payment_method: input.paymentMethod ?? null,
  };
  // These columns have no defaults, so the audited fields are what is written: the row and its audit row go in one
  // statement.
  const entry = { action: 'customer.create', targetType: 'customer', targetId: columns.id, after: audited(columns) };
  const row = await withEmailUniqueness(() =>
    insertCustomerRowWith(db, columns, (param) => auditInsertPart(actor, [entry], param)),
  );
  return created(row);
}

/**
 * A customer this very request created: nothing links to it yet (no license, subscription, ledger entry,
 * invoice or event can name an id not yet answered), so what `withDerived` would read is known: no products,
 * no credit, and the health score's full 100 (D-22), which is also the column's default.
 */
function created(row: CustomerRow): CustomerRecord {
  return { ...row, creditBalance: formatMoney('0', CREDIT_BALANCE_CURRENCY), creditBalances: {}, products: [] };
}

/** Filters of the console's list and export: `q` matches as the search does (D-23), `tier` exactly. */
export interface CustomerListFilters {
  q?: string;
  tier?: string;
}

/** The filters as the repo takes them; undefined when `q` holds no word, which matches nothing (as the search). */
function rowFilters(filters: CustomerListFilters): CustomerFilters | undefined {
  if (filters.q === undefined) return { tier: filters.tier };
  const tsquery = prefixTsquery(filters.q);
  return tsquery ? { tsquery, tier: filters.tier } : undefined;
}

export async function listCustomers(
  db: Db,
  page: PageQuery,
  filters: CustomerListFilters = {},
): Promise<Page<CustomerRecord>> {
  const where = rowFilters(filters);
  if (!where) return { rows: [], hasMore: false };
  const { rows, hasMore } = await listCustomerRows(db, page, where);
  return { rows: await withDerived(db, rows), hasMore };
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
  const where = rowFilters(filters);
  if (!where) return;
  let startingAfter: string | undefined;
  for (;;) {
    const { rows, hasMore } = await listCustomerRows(db, { limit: size, startingAfter, newestFirst: true }, where);
    if (rows.length === 0) return;
    const balances = await customerCreditBalances(
      db,
      rows.map((r) => r.id),
    );
    yield rows.map((row) => ({ ...row, creditBalances: balances.get(row.id) ?? {} }));
    if (!hasMore) return;
    startingAfter = rows.at(-1)!.id;
  }
}

export async function getCustomer(
  db: Db,
  id: string,
): Promise<{ customer: CustomerRecord; subscriptions: SubscriptionRow[] }> {
  const row = await findCustomerRow(db, id);
  if (!row) throw notFound('Customer');
  const [customer, subscriptions] = await Promise.all([one(db, row), listCustomerSubscriptionRows(db, id)]);
  return { customer, subscriptions };
}

export async function updateCustomer(
  db: Db,
  id: string,
  input: UpdateCustomerInput,
  actor: Actor,
): Promise<CustomerRecord> {
  const changes = toColumns(input);
  const row = await inTransaction(db, async (trx) => {
    const before = await lockCustomerRow(trx, id);
    if (!before) throw notFound('Customer');
    // An accepted update is an admin action even when it changes nothing: it is recorded (with no field).
    const after =
      Object.keys(changes).length === 0
        ? before
        : (await withEmailUniqueness(() => updateCustomerRow(trx, id, changes)))!;
    await recordAudit(trx, actor, {
      action: 'customer.update',
      targetType: 'customer',
      targetId: id,
      before: audited(before),
      after: audited(after),
    });
    return after;
  });
  return one(db, row);
}

/** D-22: a customer with invoices or payments keeps its billing history and cannot be deleted. */
export async function deleteCustomer(db: Db, id: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const before = await lockCustomerRow(trx, id);
    if (!before) throw notFound('Customer');
    if (await customerHasBillingHistory(trx, id)) {
      throw new AppError('customer_has_billing_history', 'The customer has invoices or payments and cannot be deleted');
    }
    try {
      await deleteCustomerRow(trx, id);
    } catch (error) {
      // Rows of other domains that reference the customer (licenses, ...) refuse the delete.
      if (isForeignKeyViolation(error)) {
        throw new AppError(
          'customer_in_use',
          'Other records (such as licenses or subscriptions) still reference the customer',
        );
      }
      throw error;
    }
    await recordAudit(trx, actor, {
      action: 'customer.delete',
      targetType: 'customer',
      targetId: id,
      before: audited(before),
    });
  });
}

/** D-23: every word of `text` must prefix-match a word of the name, company or email; best match first. */
export async function searchCustomers(db: Db, text: string): Promise<CustomerRecord[]> {
  const tsquery = prefixTsquery(text);
  if (!tsquery) return [];
  return withDerived(db, await searchCustomerRows(db, tsquery));
}

/**
 * The ids of at most `limit` customers that `text` matches as the search does (D-23), newest first, for
 * another domain's list to filter by its customer (the console's licenses `q`). Ids only: no derived figures.
 */
export async function customerIdsMatching(db: Db, text: string, limit: number): Promise<string[]> {
  const tsquery = prefixTsquery(text);
  if (!tsquery) return [];
  const { rows } = await listCustomerRows(db, { limit, newestFirst: true }, { tsquery });
  return rows.map((r) => r.id);
}

/** These customers' names by id, in one statement (a page of invoices names each customer). */
export async function customerNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  return new Map((await findCustomerNameRows(db, ids)).map((r) => [r.id, r.name]));
}
