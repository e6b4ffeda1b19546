import type { Decimal } from 'decimal.js';
import { money } from '../money.ts';
import type { InvoiceRow } from './repo.ts';

/** What is still owed: total less payments, applied credit and credit notes; nothing on paid or void invoices. */
export function amountDue(invoice: Pick<InvoiceRow, 'status' | 'total' | 'amount_paid' | 'credit_applied' | 'credited_amount'>): Decimal {
  if (invoice.status === 'paid' || invoice.status === 'void') return money(0);
  const due = money(invoice.total).minus(invoice.amount_paid).minus(invoice.credit_applied).minus(invoice.credited_amount);
  return due.isNegative() ? money(0) : due;
}
