import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery, type SortColumns } from '../db/paginate.ts';

import type { TaxExempt } from './schema.ts';

export interface CustomerRow {
  id: string;
  name: string;
  email: string;
  company: string | null;
  tier: string | null;
  billing_address: string | null;
  tax_id: string | null;
  payment_method: string | null;
  /** T-2: the rates this customer's invoices carry when their plan names none. */
  tax_rate_ids: string[];
  /** T-3. */
  tax_exempt: TaxExempt;
  health_score: number;
  /** TC-2: the test clock the customer is on, set at creation only. */
  test_clock_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a request may write; health_score is derived (D-22) and never among them. */
export interface CustomerWrite {
  name?: string;
  email?: string;
  company?: string | null;
  tier?: string | null;
  billing_address?: string | null;
  tax_id?: string | null;
  payment_method?: string | null;
  tax_rate_ids?: string[];
  tax_exempt?: TaxExempt;
}

// Never `select *`: the generated `search` tsvector is for the index, not for answers.
const COLUMNS = [
  'id',
  'name',
  'email',
  'company',
  'tier',
  'billing_address',
  'tax_id',
  'payment_method',
  'tax_rate_ids',
  'tax_exempt',
  'health_score',
  'test_clock_id',
  'created_at',
  'updated_at',
];

/** The unique index that makes emails unique case-insensitively (D-22); its violation is `email_taken`. */
export const EMAIL_UNIQUE_INDEX = 'customers_email_lower';

/** At most this many search results (D-23). */
export const SEARCH_LIMIT = 50;

export async function findCustomerRow(db: Db, id: string): Promise<CustomerRow | undefined> {
  return db('customers').where({ id }).first(COLUMNS);
}

/**
 * The customers among these ids, to select from. One array parameter, not an IN list of hundreds (a sweep batch's
 * customers, an email claim's): cheaper to build, send and parse.
 */
const customersAmong = (db: Db, ids: readonly string[]) =>
  db('customers').whereRaw('id = any(?::uuid[])', [[...new Set(ids)]]);

export async function findCustomerRowsByIds(db: Db, ids: readonly string[]): Promise<CustomerRow[]> {
  if (ids.length === 0) return [];
  return customersAmong(db, ids).select(COLUMNS);
}

/** The customer with this email, matched as the unique index `customers_email_lower` compares (D-22). */
export async function findCustomerRowByEmail(db: Db, email: string): Promise<CustomerRow | undefined> {
  return db('customers').whereRaw('lower(email) = lower(?)', [email]).first(COLUMNS);
}

/** The columns a create writes; the others take their defaults. */
export type CustomerCreate = Pick<
  CustomerRow,
  | 'id'
  | 'name'
  | 'email'
  | 'company'
  | 'tier'
  | 'billing_address'
  | 'tax_id'
  | 'payment_method'
  | 'tax_rate_ids'
  | 'tax_exempt'
  | 'test_clock_id'
>;

/** Inserts the customer; `alongside` (another statement, e.g. its audit rows) runs in the same statement. */
export async function insertCustomerRow(db: Db, row: CustomerCreate, alongside?: Knex.Raw): Promise<CustomerRow> {
  const into: Knex.QueryBuilder = alongside ? db.with('alongside', alongside).table('customers') : db('customers');
  const [created] = await into.insert(row).returning(COLUMNS);
  return created as CustomerRow;
}

/** The search's one matching rule, shared by the ranked search and the filtered list. */
const matchesSearch = (query: Knex.QueryBuilder, tsquery: string) =>
  query.whereRaw(`search @@ to_tsquery('simple', ?)`, [tsquery]);

/** List filters: `tsquery` built by `prefixTsquery` (the search's matching, D-23), `tier` exact. */
export interface CustomerFilters {
  tsquery?: string;
  tier?: string;
}

/** The columns the console's customer list sorts by (C-15): names in letters' order, whatever their case. */
export const CUSTOMER_SORTS: SortColumns = {
  name: 'lower(name)',
  email: 'lower(email)',
  company: "lower(coalesce(company, ''))",
  tier: 'tier',
  createdAt: 'created_at',
};

export function listCustomerRows(db: Db, page: PageQuery, filters: CustomerFilters = {}): Promise<Page<CustomerRow>> {
  const query = db('customers').select(COLUMNS);
  if (filters.tsquery) matchesSearch(query, filters.tsquery);
  if (filters.tier) query.where({ tier: filters.tier });
  return paginate<CustomerRow>(query, 'customers', page, CUSTOMER_SORTS);
}

/** Applies `changes`; undefined when there is no such customer. */
export async function updateCustomerRow(db: Db, id: string, changes: CustomerWrite): Promise<CustomerRow | undefined> {
  const [updated] = await db('customers')
    .where({ id })
    .update({ ...changes, updated_at: db.fn.now() })
    .returning(COLUMNS);
  return updated as CustomerRow | undefined;
}

/**
 * Locks the customer row for the rest of the transaction; false when there is none. Rows that
 * reference it (invoices, payments) take a key-share lock on it when inserted, so while the lock
 * is held none can appear between a check and the delete.
 */
export async function lockCustomerRow(db: Db, id: string): Promise<CustomerRow | undefined> {
  return db('customers').where({ id }).forUpdate().first('*');
}

/** False when there is no such customer. */
export async function deleteCustomerRow(db: Db, id: string): Promise<boolean> {
  return (await db('customers').where({ id }).delete()) > 0;
}

/**
 * Full-text search over name, company and email (D-23) through the GIN index on the generated
 * `search` column, best match first. `tsquery` must be built by `prefixTsquery` (search-query.ts):
 * it holds only letter/digit runs with `:*`, so no user text is read as tsquery syntax.
 * Exported as a builder so a test can EXPLAIN the very query that runs.
 */
export function customerSearchQuery(db: Db, tsquery: string): Knex.QueryBuilder {
  return matchesSearch(db('customers').select(COLUMNS), tsquery)
    .orderByRaw(`ts_rank(search, to_tsquery('simple', ?)) desc, name asc, id asc`, [tsquery])
    .limit(SEARCH_LIMIT);
}

export async function searchCustomerRows(db: Db, tsquery: string): Promise<CustomerRow[]> {
  return customerSearchQuery(db, tsquery);
}

/** The names of these customers, in one statement (a page of invoices or payments names each customer). */
export async function findCustomerNameRows(db: Db, ids: string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return db('customers')
    .whereIn('id', [...new Set(ids)])
    .select('id', 'name');
}

/**
 * True when invoices or payments name the customer (D-22: such a customer cannot be deleted). Asked of the rows
 * that reference the customer, as their foreign keys do, under the customer's lock (lockCustomerRow).
 */
export async function customerHasBillingHistory(db: Db, customerId: string): Promise<boolean> {
  const result = await db.raw<{ rows: { found: boolean }[] }>(
    `select exists (select 1 from invoices where customer_id = ?)
         or exists (select 1 from payments where customer_id = ?) as found`,
    [customerId, customerId],
  );
  return result.rows[0]?.found ?? false;
}

/** What issuing needs to tax these customers' invoices (T-2, T-3), in one statement. */
export type CustomerTaxProfile = Pick<CustomerRow, 'id' | 'tax_rate_ids' | 'tax_exempt' | 'tax_id'>;

export async function findTaxProfileRows(db: Db, ids: string[]): Promise<CustomerTaxProfile[]> {
  if (ids.length === 0) return [];
  return customersAmong(db, ids).select('id', 'tax_rate_ids', 'tax_exempt', 'tax_id');
}
