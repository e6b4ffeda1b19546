import type { Db } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { invoiceEventData } from './events.ts';
import { updateInvoiceRow, type InvoiceChanges, type InvoiceRow } from './repo.ts';

/**
 * Applies `changes` to a locked invoice; when nothing is left to pay on an issued or overdue
 * invoice it becomes `paid` with paidAt and invoice.paid is recorded, in the same transaction.
 * Whoever took the money (payments, provider events, credit) ends a dunning case on a paid invoice.
 */
export async function updateAndSettle(
  trx: Db,
  invoice: InvoiceRow,
  changes: InvoiceChanges,
  now: Date,
): Promise<InvoiceRow> {
  const next = { ...invoice, ...changes } as InvoiceRow;
  const open = next.status === 'issued' || next.status === 'overdue';
  if (open && amountDue(next).isZero()) {
    const paid = await updateInvoiceRow(trx, invoice.id, { ...changes, status: 'paid', paid_at: now });
    await recordEvents(trx, [{ type: 'invoice.paid', data: invoiceEventData(paid) }]);
    return paid;
  }
  return updateInvoiceRow(trx, invoice.id, changes);
}
