/**
 * An invoice as the audit log records it (C-11): what an admin action can change on it. Payments, credit
 * notes and refunds record their change on the invoice with these fields beside their own.
 */
import { formatMoney } from '../money.ts';
import type { InvoiceRow } from './repo.ts';

/** Amounts in the currency's minor units, as the API answers them, so `0` and `0.00` are no change. */
export function auditedInvoice(row: InvoiceRow): Record<string, unknown> {
  const { invoice_number, status, customer_id, subscription_id, currency, due_date, issued_at, paid_at, voided_at } =
    row;
  const m = (amount: string) => formatMoney(amount, currency);
  return {
    invoice_number,
    status,
    customer_id,
    subscription_id,
    currency,
    due_date,
    issued_at,
    paid_at,
    voided_at,
    total: m(row.total),
    amount_paid: m(row.amount_paid),
    credit_applied: m(row.credit_applied),
    credited_amount: m(row.credited_amount),
  };
}

/**
 * The action of a status change by hand (PUT /api/billing/invoices/:id): `invoice.issue`, `invoice.void`,
 * `invoice.mark_paid`.
 */
export const STATUS_ACTIONS = { issued: 'invoice.issue', void: 'invoice.void', paid: 'invoice.mark_paid' } as const;
