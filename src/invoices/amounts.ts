import type { Decimal } from 'decimal.js';
import { formatMoney, money } from '../money.ts';
import type { InvoiceRow } from './repo.ts';

/** What is still owed: total less payments, applied credit and credit notes; nothing on paid or void invoices. */
export function amountDue(
  invoice: Pick<InvoiceRow, 'status' | 'total' | 'amount_paid' | 'credit_applied' | 'credited_amount'>,
): Decimal {
  if (invoice.status === 'paid' || invoice.status === 'void') return money(0);
  const due = money(invoice.total)
    .minus(invoice.amount_paid)
    .minus(invoice.credit_applied)
    .minus(invoice.credited_amount);
  return due.isNegative() ? money(0) : due;
}

const ZERO = /^0(\.0+)?$/;

/**
 * formatMoney(amountDue(invoice)), without a Decimal when nothing was paid, applied or credited (every new invoice:
 * its event and its answer, issue 20): then what is due is the total.
 */
export function formattedAmountDue(
  invoice: Pick<InvoiceRow, 'status' | 'total' | 'amount_paid' | 'credit_applied' | 'credited_amount' | 'currency'>,
): string {
  const untouched =
    ZERO.test(invoice.amount_paid) && ZERO.test(invoice.credit_applied) && ZERO.test(invoice.credited_amount);
  if (untouched && invoice.status !== 'paid' && invoice.status !== 'void' && !invoice.total.startsWith('-'))
    return formatMoney(invoice.total, invoice.currency);
  return formatMoney(amountDue(invoice), invoice.currency);
}
