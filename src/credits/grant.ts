import type { Db } from '../db/knex.ts';
import { amountDue } from '../invoices/amounts.ts';
import { findInvoiceRow, type InvoiceRow } from '../invoices/repo.ts';
import { money } from '../money.ts';
import { applyCreditToInvoice } from './apply.ts';
import { insertLedgerEntry, ledgerBalance, lockCustomerLedger, type LedgerEntryRow, type LedgerKind } from './ledger-repo.ts';

export interface CreditApplication {
  invoice: InvoiceRow;
  amount: string;
}

/**
 * Adds an entry to the customer's store credit and spends the balance on their open invoices in that
 * currency, oldest first (D-57); each application is a ledger entry of its own (applyCreditToInvoice).
 *
 * `openInvoiceIds` are invoices the caller already locked (listOpenInvoiceRows, oldest first) before
 * this takes the ledger lock: the lock order of ledger-repo.ts. An invoice issued after that listing
 * is not visited; it took the balance there was when it was issued.
 */
export async function addCustomerCredit(
  trx: Db,
  entry: { customer_id: string; currency: string; amount: string; kind: LedgerKind; description: string | null; invoice_id?: string | null; credit_note_id?: string | null },
  openInvoiceIds: string[],
  now: Date,
): Promise<{ entry: LedgerEntryRow; applications: CreditApplication[]; balanceAfter: string }> {
  await lockCustomerLedger(trx, entry.customer_id);
  const created = await insertLedgerEntry(trx, entry);
  const applications: CreditApplication[] = [];
  for (const id of openInvoiceIds) {
    // Re-read: the caller may have changed it since locking (a credit note on this very invoice).
    const invoice = await findInvoiceRow(trx, id);
    if (!invoice || amountDue(invoice).isZero()) continue;
    const after = await applyCreditToInvoice(trx, invoice, now);
    const applied = money(after.credit_applied).minus(invoice.credit_applied);
    if (applied.gt(0)) applications.push({ invoice: after, amount: applied.toString() });
    // Something still due means the balance ran out.
    if (amountDue(after).gt(0)) break;
  }
  return { entry: created, applications, balanceAfter: await ledgerBalance(trx, entry.customer_id, entry.currency) };
}
