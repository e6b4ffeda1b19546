import type { Db } from '../db/knex.ts';
import { inlined, textLiteral, type LiteralStatement } from '../db/literal.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

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
  entry: {
    customer_id: string;
    currency: string;
    amount: string;
    kind: LedgerKind;
    description?: string | null;
    invoice_id?: string | null;
    credit_note_id?: string | null;
  },
): Promise<LedgerEntryRow> {
  // clock_timestamp(), not the column's now(): entries written in one transaction (a credit and its
  // applications) get distinct, increasing times, so the ledger reads in the order it was written.
  const [row] = await db('credit_ledger')
    .insert({ ...entry, created_at: db.raw('clock_timestamp()') })
    .returning('*');
  return row as LedgerEntryRow;
}

/** The customer's balance in one currency, as a decimal string. */
export async function ledgerBalance(db: Db, customerId: string, currency: string): Promise<string> {
  const row = await db('credit_ledger')
    .where({ customer_id: customerId, currency })
    .sum<{ balance: string | null }>('amount as balance')
    .first();
  return row?.balance ?? '0';
}

/** Balances per customer and currency for a page of customers, in one query. */
export async function ledgerBalances(db: Db, customerIds: string[]): Promise<BalanceRow[]> {
  if (customerIds.length === 0) return [];
  return db('credit_ledger')
    .whereIn('customer_id', customerIds)
    .groupBy('customer_id', 'currency')
    .select('customer_id', 'currency', db.raw('sum(amount)::text as balance'));
}

/**
 * Serialises balance changes of one customer: every writer of the ledger takes this lock first, so
 * two applications can never both spend the same credit.
 *
 * Lock order: a transaction that locks invoice rows and this lock takes the invoice rows first (issue
 * and void lock their invoice, then this; store credits and credit notes lock the customer's open
 * invoices oldest first, then this), so no two of them wait on each other in a cycle. The year's invoice-number
 * counter comes after this lock: issuing takes its numbers last (invoices/issue.ts), so a plan change that
 * credits the customer and then invoices the proration takes them in the same order as any other issuing.
 */
export async function lockCustomerLedger(db: Db, customerId: string): Promise<void> {
  await db.raw(`select ${ledgerLockSql('?')}`, [customerId]);
}

/**
 * The ledger lock of the customer whose id is the SQL `customerIdSql` (text): one key rule for every taker of the lock.
 * Keyed by the id in lower case, as PostgreSQL writes a uuid: a body may name the customer in capitals (a valid
 * UUID), and two spenders of one customer must never take two different locks.
 */
export const ledgerLockSql = (customerIdSql: string) =>
  `pg_advisory_xact_lock(hashtext('credit_ledger'), hashtext(lower(${customerIdSql})))`;

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

/** `insertLedgerEntry` for many entries in one statement, in the order given (clock_timestamp per row). */
export async function insertLedgerEntries(
  db: Db,
  entries: {
    customer_id: string;
    currency: string;
    amount: string;
    kind: LedgerKind;
    description: string | null;
    invoice_id: string | null;
  }[],
): Promise<void> {
  if (entries.length === 0) return;
  await db.raw(ledgerEntriesInsertSql('?'), [JSON.stringify(entries)]);
}

/** The insert of insertLedgerEntries, its entries read from the jsonb SQL `param` (`?`, or a literal). */
export function ledgerEntriesInsertSql(param: string): string {
  return `insert into credit_ledger (customer_id, currency, amount, kind, description, invoice_id, created_at)
     select v.customer_id, v.currency, v.amount, v.kind, v.description, v.invoice_id, clock_timestamp()
       from rows from (jsonb_to_recordset(${param}::jsonb) as (customer_id uuid, currency text, amount numeric,
         kind text, description text, invoice_id uuid))
            with ordinality as v(customer_id, currency, amount, kind, description, invoice_id, n)
      order by v.n`;
}

/**
 * `lockCustomerLedger` for many customers, in id order (two batches never wait on each other in a cycle), then
 * ledgerBalances, as two statements in ONE query (no bind parameters: the ids are literals quoted by pg). The balance
 * read is still a statement of its own after the lock, so it reads as of after the wait (each statement of a query
 * string takes its own snapshot under READ COMMITTED) and sees a spend committed while it waited; only the round trip
 * between them is saved.
 */
export async function lockAndReadLedgerBalances(db: Db, customerIds: string[]): Promise<BalanceRow[]> {
  if (customerIds.length === 0) return [];
  const results = (await db.raw(lockAndReadLedgerBalancesSql(customerIds).join(';\n'))) as unknown as {
    rows: BalanceRow[];
  }[];
  return results[1]!.rows;
}

export interface BalanceRow {
  customer_id: string;
  currency: string;
  balance: string;
}

/**
 * The two statements of lockAndReadLedgerBalances (the lock, then the balances), to be sent in one simple-protocol
 * query.
 */
export function lockAndReadLedgerBalancesSql(customerIds: string[]): [string, string] {
  const [lock, read] = lockAndReadLedgerBalancesStatements(customerIds);
  return [inlined(lock), inlined(read)];
}

/**
 * lockAndReadLedgerBalancesSql as LiteralStatements: the ids are their one value (a text[] literal), so the texts
 * are the same for any customers and a connection can prepare them once (db/hot-lock.ts).
 */
export function lockAndReadLedgerBalancesStatements(customerIds: string[]): [LiteralStatement, LiteralStatement] {
  return [
    {
      text: `select ${ledgerLockSql('id')} from (select distinct unnest($1::text[]) as id order by 1) ids`,
      values: [textArrayLiteral(customerIds)],
    },
    ledgerBalancesStatement(customerIds),
  ];
}

/**
 * ledgerBalances as a LiteralStatement (the ids its one text[] value), for a query that took the ledger locks before
 * it.
 */
export function ledgerBalancesStatement(customerIds: string[]): LiteralStatement {
  return {
    text:
      'select customer_id, currency, sum(amount)::text as balance from credit_ledger ' +
      'where customer_id = any($1::uuid[]) group by customer_id, currency',
    values: [textArrayLiteral(customerIds)],
  };
}

/**
 * A text[] literal: each element double-quoted with its `"` and `\` escaped (PostgreSQL's array syntax), the whole
 * quoted by pg's rule.
 */
const textArrayLiteral = (values: string[]) =>
  textLiteral(`{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
