import { formatMoney } from '../money.ts';
import { amountDue } from '../pricing/amount-due.ts';
import type { InvoiceRow } from './repo.ts';

/** The invoice.* payload (D-74); invoice.paid keeps the interface's invoiceId, customerId, amount, currency. */
export function invoiceEventData(invoice: InvoiceRow) {
  return {
    invoiceId: invoice.id,
    invoiceNumber: invoice.invoice_number,
    customerId: invoice.customer_id,
    subscriptionId: invoice.subscription_id,
    amount: formatMoney(invoice.total, invoice.currency),
    amountDue: formatMoney(amountDue(invoice), invoice.currency),
    currency: invoice.currency,
    status: invoice.status,
    dueDate: invoice.due_date?.toISOString() ?? null,
  };
}
