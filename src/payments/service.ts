import type { Db } from '../db/knex.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { recordEvents } from '../events/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { lockInvoice } from '../invoices/service.ts';
import { updateAndSettle } from '../invoices/settle.ts';
import { DECIMAL_PATTERN, formatMoney, money } from '../money.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import {
  findPaymentByReference,
  findLikePaymentRow,
  findPaymentRow,
  paymentRowsByReference,
  paymentTotalRows,
  insertPaymentRow,
  listPaymentRows,
  lockPaymentRow,
  PROVIDER_REFERENCE_UNIQUE,
  updatePaymentRefunds,
  type PaymentListFilters,
  type PaymentRow,
  PAYMENT_SORTS,
} from './repo.ts';
import { paymentEventData, paymentReceiptEmail, type RecordPaymentInput } from './schema.ts';
import { queueEmails } from '../emails/outbox.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { auditedInvoice } from '../invoices/audit.ts';

export interface PaymentClock {
  now?: Date;
  /** The audit row's action: `invoice.mark_paid` when marking paid settled the amount due (C-12). */
  auditAction?: 'payment.record' | 'invoice.mark_paid';
}

function duplicatePayment(paymentMethod: string, providerReference: string, existingId?: string): AppError {
  return new AppError(
    'duplicate_payment',
    `A ${paymentMethod} payment with reference ${providerReference} is already recorded`,
    {
      details: [
        {
          path: 'providerReference',
          message: existingId ? `already recorded as payment ${existingId}` : 'already recorded',
        },
      ],
    },
  );
}

/**
 * Amounts travel as decimal strings (D-3). The route's schema has checked the form of a request's amount;
 * this holds for the other callers (provider events, auto-charge), whose amounts no schema has seen.
 */
function assertDecimalAmount(amount: unknown): asserts amount is string {
  if (typeof amount !== 'string' || !DECIMAL_PATTERN.test(amount)) {
    const message = 'must be a decimal string such as "10.00"';
    throw new AppError('invalid_request', `The amount ${message}`, { details: [{ path: 'amount', message }] });
  }
}

const DAY_MS = 86_400_000;

/** C-13: money is received neither in the future nor before the day its invoice was issued (UTC). */
function assertReceivedWithin(receivedAt: Date, issuedAt: Date | null, now: Date): void {
  let message: string | undefined;
  if (receivedAt.getTime() > now.getTime()) message = 'must not be in the future';
  else if (issuedAt && receivedAt.getTime() < Math.floor(issuedAt.getTime() / DAY_MS) * DAY_MS)
    message = `must not be before the day the invoice was issued, ${issuedAt.toISOString().slice(0, 10)}`;
  if (message)
    throw new AppError('invalid_request', `The date received ${message}`, {
      details: [{ path: 'receivedAt', message }],
    });
}

/**
 * Records a payment on an invoice (D-54) and, when nothing is left to pay, settles it: the invoice
 * becomes `paid` with paidAt. Events: payment.succeeded, then (when settled) invoice.paid. Ending the
 * invoice's dunning is the caller's (settlement/, or dunning's own charge).
 *
 * Also the entry point of the provider-events worker: a repeated (paymentMethod, providerReference)
 * is the coded error `duplicate_payment`, checked before the invoice's state and the amount, so a
 * replayed provider event gets that answer even after the first one paid the invoice in full.
 * The work runs in a transaction of its own, or a savepoint inside the caller's: a refusal
 * (including the unique index's) rolls back only this call, and a caller's transaction that
 * catches it stays usable.
 */
export async function recordPayment(
  db: Db,
  input: RecordPaymentInput,
  actor: Actor,
  clock: PaymentClock = {},
): Promise<PaymentRow> {
  assertDecimalAmount(input.amount);
  const now = clock.now ?? new Date();
  const reference = input.providerReference ?? null;
  try {
    return await db.transaction(async (trx) => {
      // The invoice lock orders every payment on this invoice: the due amount read below stays true until commit.
      const invoice = await lockInvoice(trx, input.invoiceId);
      if (!invoice) {
        throw new AppError('invoice_not_found', `Invoice ${input.invoiceId} does not exist`, {
          details: [{ path: 'invoiceId', message: 'no such invoice' }],
        });
      }
      if (reference !== null) {
        const existing = await findPaymentByReference(trx, input.paymentMethod, reference);
        if (existing) throw duplicatePayment(input.paymentMethod, reference, existing.id);
      }
      if (invoice.status === 'draft' || invoice.status === 'void') {
        throw new AppError('invoice_not_payable', `A ${invoice.status} invoice cannot take payments`);
      }
      assertCurrencyPrecision(input.amount, invoice.currency);
      const amount = money(input.amount);
      const due = amountDue(invoice);
      if (amount.lte(0) || amount.gt(due)) {
        const dueText = `${formatMoney(due, invoice.currency)} ${invoice.currency}`;
        const message = `must be greater than 0 and at most the amount due, ${dueText}`;
        throw new AppError('amount_exceeds_due', `The amount ${message}`, { details: [{ path: 'amount', message }] });
      }
      const receivedAt = input.receivedAt ?? now;
      assertReceivedWithin(receivedAt, invoice.issued_at, now);
      const payment = await insertPaymentRow(trx, {
        invoice_id: invoice.id,
        customer_id: invoice.customer_id,
        amount: storedAmount(input.amount, invoice.currency),
        currency: invoice.currency,
        payment_method: input.paymentMethod,
        provider_reference: reference,
        received_at: receivedAt,
        note: input.note ?? null,
        created_at: now,
      });
      // D-54 order: the payment's event first; settling records invoice.paid after it.
      await recordEvents(trx, [{ type: 'payment.succeeded', data: paymentEventData(payment) }]);
      const settled = await updateAndSettle(
        trx,
        invoice,
        { amount_paid: storedAmount(money(invoice.amount_paid).plus(amount), invoice.currency) },
        now,
      );
      await queueEmails(trx, [paymentReceiptEmail(payment, amountDue(settled).toString())]);
      // On the invoice, whose page shows it; the payment is named in `after`.
      await recordAudits(trx, actor, [
        {
          action: clock.auditAction ?? 'payment.record',
          targetType: 'invoice',
          targetId: invoice.id,
          before: auditedInvoice(invoice),
          after: {
            ...auditedInvoice(settled),
            paymentId: payment.id,
            amount: formatMoney(payment.amount, payment.currency),
            method: payment.payment_method,
            providerReference: payment.provider_reference,
            receivedAt: payment.received_at.toISOString(),
            ...(payment.note ? { note: payment.note } : {}),
          },
        },
      ]);
      return payment;
    });
  } catch (error) {
    // The same reference on another invoice: no shared lock orders the two, the unique index decides.
    if (reference !== null && isUniqueViolation(error, PROVIDER_REFERENCE_UNIQUE))
      throw duplicatePayment(input.paymentMethod, reference);
    throw error;
  }
}

/** How far back a payment just like a new one makes the console ask before recording it again (issue 34). */
const LIKE_PAYMENT_WINDOW_MS = 60 * 60 * 1000;

/**
 * A payment without a reference recorded on the invoice in the last hour with the same amount, method and day
 * received: a second one is most likely the same money posted again (the back button, issue 34), so the console
 * asks before recording it. A reference tells payments apart; the unique reference rule covers those.
 */
export function findLikeRecentPayment(
  db: Db,
  like: { invoiceId: string; amount: string; paymentMethod: string; receivedAt: Date },
  now = new Date(),
): Promise<PaymentRow | undefined> {
  return findLikePaymentRow(db, like, new Date(now.getTime() - LIKE_PAYMENT_WINDOW_MS));
}

export async function getPayment(db: Db, id: string): Promise<PaymentRow> {
  const row = await findPaymentRow(db, id);
  if (!row) throw notFound('Payment');
  return row;
}

export type { PaymentListFilters };

export function listPayments(db: Db, page: PageQuery, filters: PaymentListFilters) {
  return listPaymentRows(db, page, filters);
}

/** The payment, unlocked; undefined when there is none. */
export function findPayment(db: Db, id: string): Promise<PaymentRow | undefined> {
  return findPaymentRow(db, id);
}

/** The payment locked for the rest of the caller's transaction: refunds of one payment happen one at a time. */
export function lockPayment(trx: Db, id: string): Promise<PaymentRow | undefined> {
  return lockPaymentRow(trx, id);
}

/** Records what has been refunded of a locked payment (D-55). */
export function setPaymentRefunds(
  trx: Db,
  id: string,
  refunds: Pick<PaymentRow, 'refunded_amount' | 'status'>,
): Promise<PaymentRow> {
  return updatePaymentRefunds(trx, id, refunds);
}

/** Payments found by the beginning of their provider reference (the console's search, C-15). */
export function findPaymentsByReference(db: Db, prefix: string, limit = 20): Promise<PaymentRow[]> {
  return paymentRowsByReference(db, prefix, limit);
}

/**
 * How many payments a list's filters keep and what they add up to, per currency (C-15); undefined when more than
 * `cap` match (db/capped.ts).
 */
export async function paymentTotals(db: Db, filters: PaymentListFilters, cap: number) {
  return (await paymentTotalRows(db, filters, cap))?.map((r) => ({
    currency: r.currency,
    count: Number(r.count),
    amount: formatMoney(r.amount, r.currency),
    refunded: formatMoney(r.refunded, r.currency),
  }));
}

/** The keys the payment list sorts by (C-15). */
export const PAYMENT_SORT_KEYS: readonly string[] = Object.keys(PAYMENT_SORTS);
