import type { Decimal } from 'decimal.js';
import { money } from '../money.ts';

/** The columns of an invoice that say what is still owed on it (an invoices row has them). */
export interface InvoiceBalance {
  status: string;
  total: string;
  amount_paid: string;
  credit_applied: string;
  credited_amount: string;
}

/**
 * What is still owed: the total less payments, applied store credit and credit notes, never below zero; nothing on a
 * paid or void invoice.
 */
export function amountDue(invoice: InvoiceBalance): Decimal {
  if (invoice.status === 'paid' || invoice.status === 'void') return money(0);
  const due = money(invoice.total)
    .minus(invoice.amount_paid)
    .minus(invoice.credit_applied)
    .minus(invoice.credited_amount);
  return due.isNegative() ? money(0) : due;
}
