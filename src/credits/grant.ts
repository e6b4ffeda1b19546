import type { Db } from '../db/knex.ts';
import { spendCreditOnInvoices, type CreditApplication } from '../invoices/credit.ts';
import { addLedgerEntry, creditBalance, type LedgerEntryInput, type LedgerEntryRow } from './ledger.ts';

export type { CreditApplication };

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
