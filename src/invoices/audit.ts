/**
 * An invoice as the audit log records it (C-11): what an admin action can change on it. Payments, credit
 * notes and refunds record their change on the invoice with these fields beside their own.
 */
import type { InvoiceRow } from './repo.ts';

export function auditedInvoice(row: InvoiceRow): Record<string, unknown> {
  const { invoice_number, status, customer_id, subscription_id, currency, total, amount_paid, credit_applied, credited_amount, due_date, issued_at, paid_at, voided_at } = row;
  return { invoice_number, status, customer_id, subscription_id, currency, total, amount_paid, credit_applied, credited_amount, due_date, issued_at, paid_at, voided_at };
}

/** The action of a status change by hand (PUT /api/billing/invoices/:id): `invoice.issue`, `invoice.void`, `invoice.mark_paid`. */
export const STATUS_ACTIONS = { issued: 'invoice.issue', void: 'invoice.void', paid: 'invoice.mark_paid' } as const;
