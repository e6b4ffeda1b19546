import {
  addLedgerEntry,
  creditBalance,
  type LedgerEntryInput,
  type LedgerEntryRow,
  spendCredit,
} from '../credits/ledger.ts';
import type { Db } from '../db/knex.ts';
import { money } from '../money.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { findInvoiceRows, type InvoiceRow } from './repo.ts';
import { updateAndSettle } from './settle.ts';

export interface CreditApplication {
  invoice: InvoiceRow;
  amount: string;
}

/**
 * Spends the customer's store credit on these open invoices, in the order given (oldest first, D-57),
 * by the ledger's one rule (spendCredit); each invoice's `credit_applied` moves with its ledger entry and
 * one left with nothing to pay is settled. The caller locked the invoices before the ledger (the lock
 * order of credits/ledger-repo.ts). Answers the invoices that took credit, as they are now.
 */
export async function spendCreditOnInvoices(trx: Db, invoiceIds: string[], now: Date): Promise<CreditApplication[]> {
  // Re-read in one statement: the caller may have changed one since locking it (a credit note on this very invoice).
  const byId = new Map((await findInvoiceRows(trx, invoiceIds)).map((i) => [i.id, i]));
  const invoices = invoiceIds
    .map((id) => byId.get(id))
    .filter((i): i is InvoiceRow => Boolean(i && amountDue(i).gt(0)));
  const spent = await spendCredit(
    trx,
    invoices.map((i) => ({
      customerId: i.customer_id,
      currency: i.currency,
      due: amountDue(i),
      invoiceId: i.id,
      invoiceNumber: i.invoice_number,
    })),
  );
  const applications: CreditApplication[] = [];
  for (const [n, invoice] of invoices.entries()) {
    const amount = spent[n]!;
    if (amount.lte(0)) continue;
    const after = await updateAndSettle(
      trx,
      invoice,
      { credit_applied: money(invoice.credit_applied).plus(amount).toString() },
      now,
    );
    applications.push({ invoice: after, amount: amount.toString() });
  }
  return applications;
}

/**
 * Adds an entry to the customer's store credit and spends the balance on their open invoices in that
 * currency, oldest first (D-57), by the ledger's one rule; each application is a ledger entry of its own.
 *
 * `openInvoiceIds` are invoices the caller already locked (lockOpenInvoices, oldest first) before this
 * takes the ledger lock: the lock order of ledger-repo.ts. An invoice issued after that listing is not
 * visited; it took the balance there was when it was issued.
 */
export async function addCustomerCredit(
  trx: Db,
  entry: LedgerEntryInput,
  openInvoiceIds: string[],
  now: Date,
): Promise<{ entry: LedgerEntryRow; applications: CreditApplication[]; balanceAfter: string }> {
  const created = await addLedgerEntry(trx, entry);
  const applications = await spendCreditOnInvoices(trx, openInvoiceIds, now);
  return { entry: created, applications, balanceAfter: await creditBalance(trx, entry.customer_id, entry.currency) };
}
