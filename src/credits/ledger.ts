/**
 * Store credit (D-57): the customer's ledger and the one rule by which credit is spent. Every writer of
 * the ledger takes the customer's ledger lock first (see lockCustomerLedger for the lock order).
 */
import type { Db } from '../db/knex.ts';
import { jsonTextLiteral, type LiteralStatement } from '../db/literal.ts';
import type { PageQuery } from '../http/schemas.ts';
import { money, Money } from '../money.ts';
import {
  insertLedgerEntries,
  insertLedgerEntry,
  ledgerEntriesInsertSql,
  ledgerBalance,
  ledgerBalances,
  listLedgerEntryRows,
  ledgerBalancesStatement,
  ledgerLockSql,
  lockAndReadLedgerBalances,
  lockCustomerLedger,
  type BalanceRow,
  type LedgerEntryRow,
  type LedgerKind,
} from './ledger-repo.ts';

export type { BalanceRow, LedgerEntryRow, LedgerKind };

export interface LedgerEntryInput {
  customer_id: string;
  currency: string;
  amount: string;
  kind: LedgerKind;
  description: string | null;
  invoice_id?: string | null;
  credit_note_id?: string | null;
}

/**
 * Adds one entry (a grant, a proration, a credit note's remainder, credit returned by a void) under the customer's
 * ledger lock.
 */
export async function addLedgerEntry(trx: Db, entry: LedgerEntryInput): Promise<LedgerEntryRow> {
  lockedBalances.delete(trx);
  await lockCustomerLedger(trx, entry.customer_id);
  return insertLedgerEntry(trx, entry);
}

/** What an invoice asks of its customer's credit: up to `due`, recorded against `invoiceId`. */
export interface CreditClaim {
  customerId: string;
  currency: string;
  due: Money;
  invoiceId: string;
}

/** What a spend takes from the ledger: the amount for each claim, in order, and the entries that record it. */
export interface CreditSpend {
  applied: Money[];
  entries: Omit<Parameters<typeof insertLedgerEntries>[1][number], 'description'>[];
}

/**
 * The one rule by which store credit is spent (D-57): claims are served in the order given, each taking
 * what is left of its customer's balance in its currency, up to what it asks; each non-zero amount is an
 * `application` entry against its invoice. Takes the ledger locks of every customer named (in id order)
 * before reading balances, so two spenders never spend the same credit: the read is a statement of its own
 * after the lock (sent in the same query: lockAndReadLedgerBalances), since one statement reads as of its start
 * and would miss a spend committed while it waited. The caller records the spend (recordCreditSpend) in the same
 * transaction once its invoices exist and have their numbers, and puts each amount on its invoice. Planning needs no
 * invoice number, so an issuing batch plans before it takes its numbers (the counter lock is held only from there to
 * commit).
 */
export async function planCreditSpend(trx: Db, claims: CreditClaim[]): Promise<CreditSpend> {
  if (claims.length === 0) return { applied: [], entries: [] };
  const customerIds = [...new Set(claims.map((c) => c.customerId))];
  return spendFromBalances(
    claims,
    takeLockedBalances(trx, customerIds) ?? (await lockAndReadLedgerBalances(trx, customerIds)),
  );
}

/** planCreditSpend's rule over balances already read (`rows`; a customer and currency without a row has none). */
export function spendFromBalances(claims: CreditClaim[], rows: BalanceRow[]): CreditSpend {
  const balances = new Map<string, Money>();
  for (const row of rows) balances.set(`${row.customer_id}:${row.currency}`, money(row.balance));
  const applications: CreditSpend['entries'] = [];
  const applied = claims.map((claim) => {
    const key = `${claim.customerId}:${claim.currency}`;
    const balance = balances.get(key) ?? money(0);
    const amount = claim.due.gt(0) ? Money.min(balance, claim.due) : money(0);
    if (amount.lte(0)) return money(0);
    balances.set(key, balance.minus(amount));
    applications.push({
      customer_id: claim.customerId,
      currency: claim.currency,
      amount: amount.negated().toString(),
      kind: 'application',
      invoice_id: claim.invoiceId,
    });
    return amount;
  });
  return { applied, entries: applications };
}

/**
 * Store credit for a batch of hundreds of customers, nearly all without credit (the sweep's batches), whose ledger
 * locks held to commit made batches queue on each other: the balances are read first WITHOUT the locks
 * (readCreditBalances) and the batch is planned with them (spendFromBalances); then, when the batch takes its
 * numbers, only the customers that read showed with credit are locked and read again (lockCreditedCustomers): if
 * their balances are unchanged the plan stands, else it is made again from the balances read under the locks. So
 * what is spent is always what was read under the lock, as planCreditSpend does. A customer read without credit
 * spends nothing and takes no lock: no other spender can be short of what this batch took, and credit added by a
 * writer that commits after that read is credit added after this issuing, which already is the rule for a grant
 * and the invoices it did not list (credits/grant.ts: an invoice issued meanwhile keeps the balance there was).
 */
export async function readCreditBalances(trx: Db, customerIds: string[]): Promise<BalanceRow[]> {
  return ledgerBalances(trx, [...new Set(customerIds)]);
}

/**
 * The ledger locks of the customers with credit in `read` (readCreditBalances), and their balances read again
 * under them: undefined when no customer had credit or none of their balances changed (a plan made with `read`
 * stands), else the balances to plan with again (the customers without credit in `read` still count as having none).
 */
export async function lockCreditedCustomers(trx: Db, read: BalanceRow[]): Promise<BalanceRow[] | undefined> {
  const credited = read.filter(isCredit);
  if (credited.length === 0) return undefined;
  lockedBalances.delete(trx);
  const locked = await lockAndReadLedgerBalances(trx, [...new Set(credited.map((row) => row.customer_id))]);
  return withCredit(locked) === withCredit(credited) ? undefined : locked;
}

const isCredit = (row: BalanceRow) => money(row.balance).gt(0);

/** Whether some customer in `read` (readCreditBalances) has credit: lockCreditedCustomers would lock them. */
export const hasCredit = (read: BalanceRow[]): boolean => read.some(isCredit);

const withCredit = (rows: BalanceRow[]) =>
  rows
    .filter(isCredit)
    .map((row) => `${row.customer_id}:${row.currency}:${money(row.balance).toString()}`)
    .sort()
    .join(' ');

/**
 * creditSpendSql for a statement in which the invoices' numbers are not known when it is written: `param(json)` turns
 * the entries' JSON (descriptions naming each invoice by `invoiceNumbers`, placeholders) into the jsonb SQL that
 * puts the numbers in (invoices/issue.ts, the sweep's last statement); undefined when the spend took nothing.
 */
export function creditSpendPart(
  spend: CreditSpend,
  invoiceNumbers: Map<string, string>,
  param: (json: string) => string,
): string | undefined {
  if (spend.entries.length === 0) return undefined;
  return ledgerEntriesInsertSql(param(JSON.stringify(applicationEntries(spend, invoiceNumbers))));
}

// Balances read under the ledger locks earlier in a transaction (lockedBalancesPart), for its next planCreditSpend.
const lockedBalances = new WeakMap<object, { customerIds: string[]; rows: BalanceRow[] }>();

/**
 * The ledger lock and balance read of a coming planCreditSpend for ONE customer, for a caller that sends them in one
 * query with a statement of its own (a subscription's insert: one round trip less): `lock(customerIdSql)` is the SQL
 * expression that takes the lock, for the caller's statement to evaluate (once, and only when it wrote: a refused
 * creation takes no lock), and `read` the balance read to send as the NEXT statement of that query, so that it reads
 * as of after the lock was granted (its own snapshot; the same reason as lockAndReadLedgerBalances). `keep(trx, rows)`
 * (the read's rows) hands them to that transaction's next planCreditSpend of exactly this customer, which then reads
 * nothing. Sound because the lock is held to the end of the transaction, so no other writer changes the balances
 * meanwhile; the caller writes no ledger entry in between (a write forgets them). A statement of its own less than
 * lockAndReadLedgerBalancesStatements' two.
 */
export function lockedBalancesPart(customerId: string): {
  lock: (customerIdSql: string) => string;
  read: LiteralStatement;
  keep: (trx: Db, rows: unknown[]) => void;
} {
  // Kept under the id as stored and read back (a uuid in lower case), which is how planCreditSpend's claims name it.
  const stored = customerId.toLowerCase();
  return {
    lock: ledgerLockSql,
    read: ledgerBalancesStatement([customerId]),
    keep: (trx, rows) => lockedBalances.set(trx, { customerIds: [stored], rows: rows as BalanceRow[] }),
  };
}

/** The balances kept for exactly `customerIds` (in any order), taken once; undefined when none were kept. */
function takeLockedBalances(trx: Db, customerIds: string[]): BalanceRow[] | undefined {
  const kept = lockedBalances.get(trx);
  if (!kept) return undefined;
  lockedBalances.delete(trx);
  const same =
    kept.customerIds.length === customerIds.length && customerIds.every((id) => kept.customerIds.includes(id));
  return same ? kept.rows : undefined;
}

/**
 * Writes a planned spend's application entries, each described by the number of its invoice (the
 * invoices must exist); a spend that took nothing writes nothing (no statement).
 */
export async function recordCreditSpend(
  trx: Db,
  spend: CreditSpend,
  invoiceNumbers: Map<string, string>,
): Promise<void> {
  lockedBalances.delete(trx);
  await insertLedgerEntries(trx, applicationEntries(spend, invoiceNumbers));
}

/**
 * recordCreditSpend as the text of one statement with its values inlined (db/literal.ts), for the last
 * statement of a hot-lock transaction (db/hot-lock.ts `finish`); undefined when the spend took nothing.
 */
export function creditSpendSql(spend: CreditSpend, invoiceNumbers: Map<string, string>): string | undefined {
  return creditSpendPart(spend, invoiceNumbers, jsonTextLiteral);
}

const applicationEntries = (spend: CreditSpend, invoiceNumbers: Map<string, string>) =>
  spend.entries.map((e) => ({ ...e, description: `Applied to ${invoiceNumbers.get(e.invoice_id!)}` }));

/** planCreditSpend and recordCreditSpend at once, for claims of invoices that exist already. */
export async function spendCredit(trx: Db, claims: (CreditClaim & { invoiceNumber: string })[]): Promise<Money[]> {
  const spend = await planCreditSpend(trx, claims);
  await recordCreditSpend(trx, spend, new Map(claims.map((c) => [c.invoiceId, c.invoiceNumber])));
  return spend.applied;
}

/** The customer's balance in one currency, as a decimal string. */
export function creditBalance(db: Db, customerId: string, currency: string): Promise<string> {
  return ledgerBalance(db, customerId, currency);
}

/** Balances per customer and currency for many customers, in one query. */
export function creditBalances(db: Db, customerIds: string[]) {
  return ledgerBalances(db, customerIds);
}

export function listCreditLedger(db: Db, page: PageQuery, filters: { customerId?: string; currency?: string }) {
  return listLedgerEntryRows(db, page, filters);
}
