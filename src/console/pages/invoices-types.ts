/**
 * The row types the invoice and payment pages render, named from what the services answer: a page depends on
 * services only (test/architecture: no module outside a domain loads its repo, and `import type` in a .tsx
 * file counts as a load there).
 */
import type { listCreditNotes } from '../../credit-notes/service.ts';
import type { listInvoiceEvents } from '../../events/service.ts';
import type { getInvoice } from '../../invoices/service.ts';
import { createPaymentBody } from '../../payments/schema.ts';
import type { getPayment } from '../../payments/service.ts';
import type { refundsOfPayments } from '../../refunds/service.ts';
import type { listDeliveriesOfEvents } from '../../webhooks/service.ts';

type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

export type InvoiceRow = Answer<typeof getInvoice>['invoice'];
export type LineItemRow = Answer<typeof getInvoice>['lines'][number];
export type PaymentRow = Answer<typeof getPayment>;
export type RefundRow = Answer<typeof refundsOfPayments> extends Map<string, (infer R)[]> ? R : never;
export type CreditNoteRow = Answer<typeof listCreditNotes>['rows'][number];
export type EventRow = Answer<typeof listInvoiceEvents>[number];
export type DeliveryRow = Answer<typeof listDeliveriesOfEvents>[number];

export const PAYMENT_METHODS = createPaymentBody.shape.paymentMethod.options;
/** The `status` filter of the payments list; `satisfies` keeps it the payments domain's list. */
export const PAYMENT_STATUSES = [
  'succeeded',
  'partially_refunded',
  'refunded',
] as const satisfies readonly PaymentRow['status'][];
