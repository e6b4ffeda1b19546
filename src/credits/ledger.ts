/**
 * Store credit (D-57): the customer's ledger and the one rule by which credit is spent. Every writer of the ledger
 * takes the customer's ledger lock first (see lockCustomerLedgers for the lock order).
 */
import type { Db } from '../db/knex.ts';
import type { PageQuery } from '../db/paginate.ts';
import { money, Money } from '../money.ts';
import {
  insertLedgerEntries,
  ledgerBalances,
  listLedgerEntryRows,
  lockCustomerLedgers,
  type BalanceRow,
  type LedgerEntryInsert,
  type LedgerEntryRow,
  type LedgerKind,
} from './ledger-repo.ts';

export type { BalanceRow, LedgerEntryRow, LedgerKind };

export type LedgerEntryInput = LedgerEntryInsert;

/**
 * Adds one entry (a grant, a proration, a credit note's remainder, credit returned by a void) under the customer's
 * ledger lock.
 */
export async function addLedgerEntry(trx: Db, entry: LedgerEntryInput): Promise<LedgerEntryRow> {
  await lockCustomerLedgers(trx, [entry.customer_id]);
  const [row] = await insertLedgerEntries(trx, [entry]);
  return row!;
}

/** What an invoice asks of its customer's credit: up to `due`, recorded against `invoiceId`. */
export interface CreditClaim {
  customerId: string;
  currency: string;
  due: Money;
  invoiceId: string;
}

/** What a spend takes from the ledger: the amount for each claim, in order, and the application entries to write. */
export interface CreditSpend {
  applied: Money[];
  entries: (LedgerEntryInsert & { invoice_id: string })[];
}

/**
 * The one rule by which store credit is spent (D-57), its first step: claims are served in the order given, each
 * taking what is left of its customer's balance in its currency, up to what it asks; each non-zero amount is an
 * `application` entry against its invoice. Takes the ledger locks of the customers named that have credit before
 * reading their balances again, so two spenders never spend the same credit; that read is a statement of its own
 * after the lock, since one statement reads as of its start and would miss a spend committed while it waited. A
 * customer whose committed balance is nothing in every currency is neither locked nor read again: only spends lower a
 * balance, and credit granted while this runs serves the next invoice, as it would have a moment later (a sweep batch
 * of 500 customers without credit takes no lock).
 *
 * The second step, recordCreditSpend, writes the entries once the invoices have their numbers (each entry names its
 * invoice's number), in the same transaction. Planning needs no number, so issuing plans before it takes its numbers
 * and the year's counter is held only from there to commit (invoices/issue.ts).
 */
export async function planCreditSpend(trx: Db, claims: CreditClaim[]): Promise<CreditSpend> {
  if (claims.length === 0) return { applied: [], entries: [] };
  const customerIds = [...new Set(claims.map((c) => c.customerId))];
  const withCredit = [
    ...new Set(
      (await ledgerBalances(trx, customerIds)).filter((r) => money(r.balance).gt(0)).map((r) => r.customer_id),
    ),
  ];
  const balances = new Map<string, Money>();
  if (withCredit.length > 0) {
    await lockCustomerLedgers(trx, withCredit);
    for (const row of await ledgerBalances(trx, withCredit))
      balances.set(balanceKey(row.customer_id, row.currency), money(row.balance));
  }
  const entries: CreditSpend['entries'] = [];
  const applied = claims.map((claim) => {
    const key = balanceKey(claim.customerId, claim.currency);
    const balance = balances.get(key) ?? money(0);
    const amount = claim.due.gt(0) ? Money.min(balance, claim.due) : money(0);
    if (amount.lte(0)) return money(0);
    balances.set(key, balance.minus(amount));
    entries.push({
      customer_id: claim.customerId,
      currency: claim.currency,
      amount: amount.negated().toString(),
      kind: 'application',
      invoice_id: claim.invoiceId,
    });
    return amount;
  });
  return { applied, entries };
}

// A uuid as stored (lower case): a claim may name the customer in capitals.
const balanceKey = (customerId: string, currency: string) => `${customerId.toLowerCase()}:${currency}`;

/**
 * The second step of spending credit: writes a planned spend's application entries, each described by the number of
 * its invoice (the invoices must exist), in one statement; a spend that took nothing writes nothing.
 */
export async function recordCreditSpend(
  trx: Db,
  spend: CreditSpend,
  invoiceNumbers: Map<string, string>,
): Promise<void> {
  await insertLedgerEntries(
    trx,
    spend.entries.map((e) => ({ ...e, description: `Applied to ${invoiceNumbers.get(e.invoice_id)}` })),
  );
}

/** Both steps at once, for claims of invoices that exist already (and so have their numbers). */
export async function spendCredit(trx: Db, claims: (CreditClaim & { invoiceNumber: string })[]): Promise<Money[]> {
  const spend = await planCreditSpend(trx, claims);
  await recordCreditSpend(trx, spend, new Map(claims.map((c) => [c.invoiceId, c.invoiceNumber])));
  return spend.applied;
}

/** The customer's balance in one currency, as a decimal string. */
export async function creditBalance(db: Db, customerId: string, currency: string): Promise<string> {
  const row = (await ledgerBalances(db, [customerId])).find((r) => r.currency === currency);
  return row?.balance ?? '0';
}

/** Balances per customer and currency for many customers, in one query. */
export function creditBalances(db: Db, customerIds: string[]) {
  return ledgerBalances(db, customerIds);
}

export function listCreditLedger(db: Db, page: PageQuery, filters: { customerId?: string; currency?: string }) {
  return listLedgerEntryRows(db, page, filters);
}
