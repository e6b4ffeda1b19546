import type { Db } from '../db/knex.ts';
import { amountDue } from '../invoices/amounts.ts';
import type { InvoiceRow } from '../invoices/repo.ts';
import { updateAndSettle } from '../invoices/settle.ts';
import { money, Money } from '../money.ts';
import { insertLedgerEntry, ledgerBalance } from './ledger-repo.ts';

/**
 * Spends the customer's store credit (same currency) on a locked, issued invoice: one ledger
 * application entry and `credit_applied` move together. The caller holds the ledger lock.
 */
export async function applyCreditToInvoice(trx: Db, invoice: InvoiceRow, now: Date): Promise<InvoiceRow> {
  const balance = money(await ledgerBalance(trx, invoice.customer_id, invoice.currency));
  const due = amountDue(invoice);
  const applied = Money.min(balance, due);
  if (applied.lte(0)) return invoice;
  await insertLedgerEntry(trx, {
    customer_id: invoice.customer_id,
    currency: invoice.currency,
    amount: applied.negated().toString(),
    kind: 'application',
    description: `Applied to ${invoice.invoice_number}`,
    invoice_id: invoice.id,
  });
  return updateAndSettle(trx, invoice, { credit_applied: money(invoice.credit_applied).plus(applied).toString() }, now);
}
