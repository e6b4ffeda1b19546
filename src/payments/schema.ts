import { z } from 'zod';
import { iso, nameText, pageQuery, timestampInput, uuid } from '../http/schemas.ts';
import { formatMoney } from '../money.ts';
import { positiveMoneyString } from '../money-input.ts';
import { PAYMENT_METHODS, type PaymentMethod, type PaymentRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/**
 * POST /api/billing/payments (D-54). An amount of 0 or less is wrong whatever the invoice: the schema
 * refuses it naming `amount` (issue 19); the upper bound (<= amount due) is checked against the locked
 * invoice and answers amount_exceeds_due.
 */
export const createPaymentBody = z
  .object({
    invoiceId: uuid,
    amount: positiveMoneyString,
    paymentMethod: z.enum(PAYMENT_METHODS, { error: `must be one of ${PAYMENT_METHODS.join(', ')}` }),
    // An identifier (D-95): "BT-1\n" refused, not a second reference beside "BT-1" that slips past duplicate_payment.
    providerReference: nameText(255)
      .nullish()
      .transform((v) => v ?? null),
    // C-13: the day the money arrived (a bank transfer of last week); not in the future, not before issuing.
    receivedAt: timestampInput
      .optional()
      .describe('when the money arrived (C-13): a date or date-time, not in the future, not before issuing; now'),
  })
  .meta({
    examples: [
      {
        invoiceId: EXAMPLE_ID.invoice,
        amount: '49.00',
        paymentMethod: 'bank_transfer',
        providerReference: 'WIRE-2026-0117',
      },
    ],
  });
/** What recordPayment takes: the parsed request body, or the same fields from a provider event. */
export interface RecordPaymentInput {
  invoiceId: string;
  /** A decimal string (D-3). */
  amount: string;
  paymentMethod: PaymentMethod;
  providerReference?: string | null;
  /** When the money arrived (C-13); the recording moment when absent. */
  receivedAt?: Date;
  /** The admin's note (C-12: why an invoice was marked paid). */
  note?: string | null;
}

export const listPaymentsQuery = pageQuery.extend({ invoiceId: uuid.optional(), customerId: uuid.optional() });

export const paymentResponse = z
  .object({
    id: z.uuid(),
    invoiceId: z.uuid(),
    customerId: z.uuid(),
    amount: z.string(),
    currency: z.string(),
    paymentMethod: z.enum(PAYMENT_METHODS),
    providerReference: z.string().nullable(),
    status: z.enum(['succeeded', 'partially_refunded', 'refunded']),
    refundedAmount: z.string(),
    receivedAt: z.string().describe('when the money arrived (C-13)'),
    note: z.string().nullable(),
    createdAt: z.string().describe('when the payment was recorded'),
  })
  .meta({
    examples: [
      {
        id: EXAMPLE_ID.payment,
        invoiceId: EXAMPLE_ID.invoice,
        customerId: EXAMPLE_ID.customer,
        amount: '49.00',
        currency: 'USD',
        paymentMethod: 'bank_transfer',
        providerReference: 'WIRE-2026-0117',
        status: 'succeeded',
        refundedAmount: '0.00',
        receivedAt: '2026-01-03T00:00:00.000Z',
        note: null,
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialisePayment(row: PaymentRow) {
  return {
    id: row.id,
    invoiceId: row.invoice_id,
    customerId: row.customer_id,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    paymentMethod: row.payment_method,
    providerReference: row.provider_reference,
    status: row.status,
    refundedAmount: formatMoney(row.refunded_amount, row.currency),
    receivedAt: iso(row.received_at)!,
    note: row.note,
    createdAt: iso(row.created_at)!,
  };
}

/** The payment.* payload (D-74); failureReason is set only by payment.failed. */
export function paymentEventData(row: PaymentRow, failureReason: string | null = null) {
  return {
    paymentId: row.id,
    invoiceId: row.invoice_id,
    customerId: row.customer_id,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    paymentMethod: row.payment_method,
    failureReason,
  };
}

/** M-3 `payment.receipt`, once per payment: the amount, and what the invoice still owed after it. */
export function paymentReceiptEmail(row: PaymentRow, amountStillDue: string) {
  return {
    type: 'payment.receipt' as const,
    customerId: row.customer_id,
    occasion: row.id,
    data: {
      paymentId: row.id,
      invoiceId: row.invoice_id,
      amount: row.amount,
      currency: row.currency,
      amountDue: amountStillDue,
    },
  };
}
