/**
 * Customers (D-22, D-23): the rows, their search, and what other domains ask of them (does it exist, its name).
 * What other domains know of a customer (products, store credit, health score, subscriptions) is added to the
 * answers by the read model in reporting/customer-view.ts.
 */
import { newUuid } from '../crypto/ids.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { Page, PageQuery } from '../db/paginate.ts';
import { AppError, fieldsRefused, notFound } from '../errors.ts';
import {
  customerHasBillingHistory,
  deleteCustomerRow,
  findCustomerNameRows,
  EMAIL_UNIQUE_INDEX,
  findCustomerRow,
  findCustomerRowsByIds,
  findCustomerRowByEmail,
  insertCustomerRow,
  listCustomerRows,
  lockCustomerRow,
  searchCustomerRows,
  updateCustomerRow,
  type CustomerCreate,
  type CustomerFilters,
  findTaxProfileRows,
  type CustomerRow,
  type CustomerTaxProfile,
  type CustomerWrite,
  CUSTOMER_SORTS,
} from './repo.ts';
import type { CreateCustomerInput, UpdateCustomerInput } from './schema.ts';
import { prefixTsquery } from './search-query.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Actor } from '../actor.ts';
import { auditStatement, recordAudits } from '../audit/service.ts';
import { requireUsableTaxRates } from '../tax-rates/service.ts';
import { requireJoinableTestClock } from './clock.ts';

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
    tax_rate_ids: input.taxRateIds,
    tax_exempt: input.taxExempt,
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

/** A customer's fields as the audit log records them: what an admin can change. */
function audited(row: CustomerCreate): Record<string, unknown> {
  const { name, email, company, tier, billing_address, tax_id, payment_method, tax_rate_ids, tax_exempt } = row;
  const fields = { name, email, company, tier, billing_address, tax_id, payment_method, tax_rate_ids, tax_exempt };
  return row.test_clock_id ? { ...fields, test_clock_id: row.test_clock_id } : fields;
}

/**
 * T-2, T-3: the customer's rates exist and are active, and a reverse-charge customer has the tax id its invoices
 * must show. `customer` is the customer as it will be.
 */
async function assertTaxTerms(db: Db, customer: Pick<CustomerRow, 'tax_rate_ids' | 'tax_exempt' | 'tax_id'>) {
  if (customer.tax_exempt === 'reverse' && !customer.tax_id) {
    const message = 'is required when taxExempt is reverse (reverse-charge invoices show it)';
    throw fieldsRefused([{ path: 'taxId', message }]);
  }
  await requireUsableTaxRates(db, customer.tax_rate_ids, 'taxRateIds');
}

export async function createCustomer(db: Db, input: CreateCustomerInput, actor: Actor): Promise<CustomerRow> {
  const columns: CustomerCreate = {
    id: newUuid(),
    name: input.name,
    email: input.email,
    company: input.company ?? null,
    tier: input.tier ?? null,
    billing_address: input.billingAddress ?? null,
    tax_id: input.taxId ?? null,
    payment_method: input.paymentMethod ?? null,
    tax_rate_ids: input.taxRateIds ?? [],
    tax_exempt: input.taxExempt ?? 'none',
    test_clock_id: input.testClockId ?? null,
  };
  await assertTaxTerms(db, columns);
  if (columns.test_clock_id) await requireJoinableTestClock(db, columns.test_clock_id);
  const entry = { action: 'customer.create', targetType: 'customer', targetId: columns.id, after: audited(columns) };
  // One statement with its audit row instead of a transaction (BEGIN, two inserts, COMMIT): the create ran at 0.38
  // of the raw write ceiling and its aim is 0.6; bench/cpu-per-request.ts put most of the difference in the round
  // trips (figures in docs/decisions.md, issue 32).
  return withEmailUniqueness(() => insertCustomerRow(db, columns, auditStatement(db, actor, [entry])));
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

/** A page of the customers the filters match; the rows alone (what other domains know of them is reporting/'s). */
export async function findCustomers(
  db: Db,
  page: PageQuery,
  filters: CustomerListFilters = {},
): Promise<Page<CustomerRow>> {
  const where = rowFilters(filters);
  if (!where) return { rows: [], hasMore: false };
  return listCustomerRows(db, page, where);
}

/**
 * Every customer the filters match, newest first, in keyset batches of `size`, so an export streams any
 * number of them with bounded memory.
 */
export async function* customerRowBatches(
  db: Db,
  filters: CustomerListFilters,
  size: number,
): AsyncGenerator<CustomerRow[]> {
  const where = rowFilters(filters);
  if (!where) return;
  let startingAfter: string | undefined;
  for (;;) {
    const { rows, hasMore } = await listCustomerRows(db, { limit: size, startingAfter, newestFirst: true }, where);
    if (rows.length === 0) return;
    yield rows;
    if (!hasMore) return;
    startingAfter = rows.at(-1)!.id;
  }
}

/** The customer; not_found when there is none. */
export async function findCustomer(db: Db, id: string): Promise<CustomerRow> {
  const row = await findCustomerRow(db, id);
  if (!row) throw notFound('Customer');
  return row;
}

/** The customers among these ids, by id (ids that are no customer's are left out). */
export async function findCustomersById(db: Db, ids: readonly string[]): Promise<Map<string, CustomerRow>> {
  return new Map((await findCustomerRowsByIds(db, ids)).map((row) => [row.id, row]));
}

/** The customer whose email this is (case-insensitively, as D-22 makes emails unique), or undefined. */
export function findCustomerByEmail(db: Db, email: string): Promise<CustomerRow | undefined> {
  return findCustomerRowByEmail(db, email);
}

export async function updateCustomer(
  db: Db,
  id: string,
  input: UpdateCustomerInput,
  actor: Actor,
): Promise<CustomerRow> {
  const changes = toColumns(input);
  return inTransaction(db, async (trx) => {
    const before = await lockCustomerRow(trx, id);
    if (!before) throw notFound('Customer');
    // Rates already on the customer stay valid even when archived since (they just stop applying, T-1).
    if (changes.tax_rate_ids !== undefined || changes.tax_exempt !== undefined || changes.tax_id !== undefined)
      await assertTaxTerms(trx, { ...before, ...changes, tax_rate_ids: changes.tax_rate_ids ?? [] });
    // An accepted update is an admin action even when it changes nothing: it is recorded (with no field).
    const after =
      Object.keys(changes).length === 0
        ? before
        : (await withEmailUniqueness(() => updateCustomerRow(trx, id, changes)))!;
    await recordAudits(trx, actor, [
      {
        action: 'customer.update',
        targetType: 'customer',
        targetId: id,
        before: audited(before),
        after: audited(after),
      },
    ]);
    return after;
  });
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
    const entry = { action: 'customer.delete', targetType: 'customer', targetId: id, before: audited(before) };
    await recordAudits(trx, actor, [entry]);
  });
}

/** D-23: every word of `text` must prefix-match a word of the name, company or email; best match first. */
export async function searchCustomers(db: Db, text: string): Promise<CustomerRow[]> {
  const tsquery = prefixTsquery(text);
  if (!tsquery) return [];
  return searchCustomerRows(db, tsquery);
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

export type { CustomerTaxProfile };

/** These customers' tax terms by id, in one statement (issuing prices their invoices with them, T-2, T-3). */
export async function customerTaxProfiles(db: Db, ids: string[]): Promise<Map<string, CustomerTaxProfile>> {
  return new Map((await findTaxProfileRows(db, ids)).map((r) => [r.id, r]));
}

/** The keys the customer list sorts by (C-15). */
export const CUSTOMER_SORT_KEYS: readonly string[] = Object.keys(CUSTOMER_SORTS);
