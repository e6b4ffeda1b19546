import { queueEmails } from '../emails/outbox.ts';
import { newUuid } from '../crypto/ids.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { formatMoney, money } from '../money.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import type { PaymentRow } from '../payments/repo.ts';
import { lockPayment, setPaymentRefunds } from '../payments/service.ts';
import { PROVIDER_TIMEOUT_MS } from '../providers/call.ts';
import { RefundGatewayError, type ProviderRefundConfig, type RefundGateway } from './gateway.ts';
import { refundGatewayFor } from './gateway-registry.ts';
import {
  completeRefundRow,
  deletePendingRefundRow,
  findRefundRow,
  findUnleasedPendingRefund,
  insertRefundRow,
  leaseRefundRow,
  listRefundRows,
  listRefundRowsOfPayments,
  pendingRefundAskedAgain,
  pendingRefundTotal,
  releaseRefundLease,
  type RefundListFilters,
  type RefundRow,
} from './repo.ts';
import type { CreateRefundInput } from './schema.ts';
import type { Actor } from '../actor.ts';
import { recordAudits, type AuditEntry } from '../audit/service.ts';

export interface RefundOptions {
  config: ProviderRefundConfig;
  now?: Date;
  /** Which gateway refunds a payment method; refundGatewayFor unless a test swaps it. */
  gatewayFor?: (paymentMethod: string) => RefundGateway | undefined;
  /** The admin request's own Idempotency-Key, digested (idempotency/middleware.ts requestIntent), when it has one. */
  requestIntent?: string;
}

export const gatewaysOf = (options: RefundOptions) =>
  options.gatewayFor ?? ((method: string) => refundGatewayFor(method, options.config));

/** Adds a completed refund to its locked payment: refunded_amount and the payment's status move together. */
async function addRefundToPayment(trx: Db, payment: PaymentRow, amount: string): Promise<PaymentRow> {
  const refunded = money(payment.refunded_amount).plus(amount);
  return setPaymentRefunds(trx, payment.id, {
    refunded_amount: storedAmount(refunded, payment.currency),
    status: refunded.gte(payment.amount) ? 'refunded' : 'partially_refunded',
  });
}

/**
 * The refund's audit row (C-11), written where the refund becomes real: on the invoice of the payment, whose
 * page shows it, with the payment named in `after`.
 */
function auditRefund(trx: Db, actor: Actor, before: PaymentRow, after: PaymentRow, refund: RefundRow): Promise<void> {
  const entry: AuditEntry = {
    action: 'refund.create',
    targetType: 'invoice',
    targetId: before.invoice_id,
    before: { refunded_amount: formatMoney(before.refunded_amount, before.currency), payment_status: before.status },
    after: {
      refund_id: refund.id,
      payment_id: before.id,
      amount: formatMoney(refund.amount, before.currency),
      reason: refund.reason,
      reasonCode: refund.reason_code,
      refunded_amount: formatMoney(after.refunded_amount, after.currency),
      payment_status: after.status,
    },
  };
  return recordAudits(trx, actor, [entry]);
}

/** How long one ask of the provider holds a reservation: far beyond the call's own timeout and the commit after it. */
const CALL_LEASE_MS = 6 * PROVIDER_TIMEOUT_MS;
export const leaseEnd = (now: Date) => new Date(now.getTime() + CALL_LEASE_MS);

/** A reservation leased for one ask of its provider, with the Idempotency-Key that ask goes under. */
export interface Reservation {
  refund: RefundRow;
  payment: PaymentRow;
  gateway: RefundGateway;
  idempotencyKey: string;
}

type AskOutcome = { kind: 'refunded'; refund: RefundRow } | { kind: 'refused' | 'unknown'; error: RefundGatewayError };

/**
 * Asks the provider to make the reservation's refund. Confirmed: recorded. Refused (definite, a 4xx): the
 * reservation goes, nothing recorded (D-55). Unknown (5xx, timeout, connection lost): the provider may have
 * refunded, so the reservation stays `pending` and holds its amount, its lease released; asking again under
 * the same Idempotency-Key answers the refund made, or makes it now, never a second one.
 */
export async function askProvider(db: Db, r: Reservation, actor: Actor): Promise<AskOutcome> {
  let providerRefundId: string;
  try {
    ({ providerRefundId } = await r.gateway.refund(r.payment, r.refund.amount, r.idempotencyKey));
  } catch (error) {
    // Anything else (a bug, the database): the lease runs out and the reservation can be asked for again.
    if (!(error instanceof RefundGatewayError)) throw error;
    if (error.definite) await deletePendingRefundRow(db, r.refund.id);
    else await releaseRefundLease(db, r.refund.id);
    return { kind: error.definite ? 'refused' : 'unknown', error };
  }
  return { kind: 'refunded', refund: await completeRefund(db, r.refund.id, providerRefundId, actor) };
}

function unknownOutcome(error: RefundGatewayError, r: Reservation, underRequestKey: boolean): AppError {
  const held = `${formatMoney(r.refund.amount, r.refund.currency)} ${r.refund.currency}`;
  const next = underRequestKey
    ? 'sending this request again with the same Idempotency-Key completes it without refunding twice'
    : `${held} stay reserved as pending refund ${r.refund.id}, and asking for the same refund again (this payment, ` +
      `this amount) completes it without refunding twice`;
  return new AppError('provider_error', `${error.message}; whether the refund was made is unknown: ${next}`);
}

/**
 * The pending refund of this payment and amount that an earlier ask left unsettled (its outcome unknown, or its
 * process stopped), leased for this ask: asking for the same refund again resumes it under its own key. One that
 * is being asked for again at this moment (by another retry, or the sweep) is not a new refund either: 409. A
 * reservation younger than a lease that is leased is a first ask running, and another refund may go beside it.
 */
async function resumableRefund(
  trx: Db,
  payment: PaymentRow,
  amount: string,
  now: Date,
): Promise<RefundRow | undefined> {
  const unsettled = await findUnleasedPendingRefund(trx, payment.id, amount, now);
  if (unsettled) return leaseRefundRow(trx, unsettled.id, leaseEnd(now), now, payment.currency);
  if (await pendingRefundAskedAgain(trx, payment.id, amount, now, new Date(now.getTime() - CALL_LEASE_MS))) {
    throw new AppError(
      'request_in_progress',
      `A pending refund of ${formatMoney(amount, payment.currency)} ${payment.currency} of this payment is being ` +
        `asked of the provider again right now; ask again in a minute`,
    );
  }
  return undefined;
}

/**
 * D-55. A refund of a payment taken through a provider's API is made there first and recorded only
 * when the provider confirms it; a refusal answers 502 and records nothing.
 *
 * Concurrency: the refundable check and a `pending` reservation of the amount are written together
 * under the payment's row lock, and that short transaction commits before the provider is called.
 * A second refund of the same payment waits only for that lock, then sees the reservation and
 * cannot pass the check on the same money; the row is not locked during the (up to 10 s) provider
 * call, and no pooled connection is held through it. The reservation is leased for the call, and the
 * provider's answer then completes it (status `succeeded`, refunded_amount raised) or, refused, deletes it.
 *
 * Never twice: the provider's Idempotency-Key is the reservation's id, or, under the request's own
 * Idempotency-Key (D-6), a digest of that request (`requestIntent`), since its transaction, the
 * reservation's too, rolls back with a 502. When the outcome is unknown the 502 says so and the
 * reservation stays pending; the same refund asked again (same payment and amount) finds it and asks
 * again under its key, and so does resumePendingRefunds later. Inside a caller's transaction the steps
 * share that transaction: still correct, with the lock held through the call.
 *
 * A refund never changes the invoice: it stays `paid` and amount_paid keeps the money received;
 * what went back is on the payment (refundedAmount, status).
 */
export async function createRefund(
  db: Db,
  input: CreateRefundInput,
  actor: Actor,
  options: RefundOptions,
): Promise<RefundRow> {
  const now = options.now ?? new Date();
  const gatewayFor = gatewaysOf(options);
  const reserved = await inTransaction(db, async (trx): Promise<Reservation | RefundRow> => {
    const payment = await lockPayment(trx, input.paymentId);
    if (!payment) {
      throw new AppError('payment_not_found', `Payment ${input.paymentId} does not exist`, {
        details: [{ path: 'paymentId', message: 'no such payment' }],
      });
    }
    assertCurrencyPrecision(input.amount, payment.currency);
    const gateway = gatewayFor(payment.payment_method);
    const resumed = gateway && (await resumableRefund(trx, payment, storedAmount(input.amount, payment.currency), now));
    if (resumed) return { refund: resumed, payment, gateway: gateway!, idempotencyKey: resumed.id };
    const amount = money(input.amount);
    const refundable = money(payment.amount)
      .minus(payment.refunded_amount)
      .minus(await pendingRefundTotal(trx, payment.id));
    if (amount.lte(0) || amount.gt(refundable)) {
      const message =
        `must be greater than 0 and at most what is left to refund, ` +
        `${formatMoney(refundable, payment.currency)} ${payment.currency}`;
      throw new AppError('amount_exceeds_refundable', `The amount ${message}`, {
        details: [{ path: 'amount', message }],
      });
    }
    if (gateway && !payment.provider_reference) {
      throw new AppError(
        'payment_not_refundable',
        `This ${payment.payment_method} payment has no providerReference, so the provider cannot be asked to refund it`,
      );
    }
    const refund = await insertRefundRow(
      trx,
      {
        id: newUuid(),
        payment_id: payment.id,
        amount: storedAmount(input.amount, payment.currency),
        reason: input.reason,
        reason_code: input.reasonCode ?? null,
        status: gateway ? 'pending' : 'succeeded',
        call_lease_until: gateway ? leaseEnd(now) : null,
        created_at: now,
      },
      payment.currency,
    );
    // Money that moved outside the service (bank transfer, manual, provider_b/c): recorded at once.
    if (!gateway) {
      await auditRefund(trx, actor, payment, await addRefundToPayment(trx, payment, refund.amount), refund);
      await queueEmails(trx, [refundIssuedEmail(payment, refund)]);
      return refund;
    }
    return {
      refund,
      payment,
      gateway,
      idempotencyKey: options.requestIntent ? `refund_${options.requestIntent}` : refund.id,
    };
  });
  if (!('gateway' in reserved)) return reserved;

  const outcome = await askProvider(db, reserved, actor);
  if (outcome.kind === 'refunded') return outcome.refund;
  if (outcome.kind === 'refused') throw new AppError('provider_error', outcome.error.message);
  throw unknownOutcome(outcome.error, reserved, options.requestIntent !== undefined);
}

/** M-3 `refund.issued`, once per refund, when it succeeds. */
function refundIssuedEmail(payment: PaymentRow, refund: RefundRow) {
  return {
    type: 'refund.issued' as const,
    customerId: payment.customer_id,
    occasion: refund.id,
    data: { refundId: refund.id, invoiceId: payment.invoice_id, amount: refund.amount, currency: refund.currency },
  };
}

/** Turns a reservation the provider confirmed into a refund, under the payment's lock; its audit row goes with it. */
async function completeRefund(db: Db, refundId: string, providerRefundId: string, actor: Actor): Promise<RefundRow> {
  return inTransaction(db, async (trx) => {
    const reservation = await findRefundRow(trx, refundId);
    if (!reservation) throw new Error(`refund ${refundId} vanished while its provider call ran`);
    const payment = await lockPayment(trx, reservation.payment_id);
    const completed = await completeRefundRow(trx, refundId, providerRefundId, reservation.currency);
    // Already completed by someone else (a resume sweep racing a slow request): nothing more to add.
    if (!completed) return (await findRefundRow(trx, refundId))!;
    await auditRefund(trx, actor, payment!, await addRefundToPayment(trx, payment!, completed.amount), completed);
    await queueEmails(trx, [refundIssuedEmail(payment!, completed)]);
    return completed;
  });
}

export function listRefunds(db: Db, page: PageQuery, filters: RefundListFilters) {
  return listRefundRows(db, page, filters);
}

/** The refunds of these payments, oldest first, by payment id (a page of payments shows each one's refunds). */
export async function refundsOfPayments(db: Db, paymentIds: string[]): Promise<Map<string, RefundRow[]>> {
  const byPayment = new Map<string, RefundRow[]>(paymentIds.map((id) => [id, []]));
  for (const row of await listRefundRowsOfPayments(db, paymentIds)) byPayment.get(row.payment_id)?.push(row);
  return byPayment;
}
