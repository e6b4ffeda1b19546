/**
 * What a customer sees of its invoices through the v1 API (D-15): its own, once sent. A draft is "not yet
 * sent" (interface.md): it may still change or be voided, so the customer's key neither lists it nor reads
 * it or its PDF; it answers exactly as another customer's invoice or one that does not exist.
 */
import type { InvoiceRow, InvoiceStatus } from './repo.ts';

/** The statuses of invoices a customer has been sent; the v1 list filters by these only. */
export const SENT_INVOICE_STATUSES = ['issued', 'paid', 'overdue', 'void'] as const satisfies readonly InvoiceStatus[];

export function visibleToCustomer(invoice: Pick<InvoiceRow, 'customer_id' | 'status'>, customerId: string): boolean {
  return invoice.customer_id === customerId && invoice.status !== 'draft';
}
