import { newUuid } from '../crypto/ids.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { formatMoney, money } from '../money.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import type { PaymentRow } from '../payments/repo.ts';
import { findPayment, lockPayment, setPaymentRefunds } from '../payments/service.ts';
import { RefundGatewayError, type ProviderRefundConfig, type RefundGateway } from './gateway.ts';
import { refundGatewayFor } from './gateway-registry.ts';
import {
  completeRefundRow, deletePendingRefundRow, findRefundRow, insertRefundRow, listRefundRows, listRefundRowsOfPayments, listStalePendingRefundIds, pendingRefundTotal,
  type RefundRow,
} from './repo.ts';
import type { CreateRefundInput } from './schema.ts';
import { SYSTEM_ACTOR, type Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/service.ts';

export interface RefundOptions {
  config: ProviderRefundConfig;
  now?: Date;
  /** Which gateway refunds a payment method; refundGatewayFor unless a test swaps it. */
  gatewayFor?: (paymentMethod: string) => RefundGateway | undefined;
}

const gatewaysOf = (options: RefundOptions) => options.gatewayFor ?? ((method: string) => refundGatewayFor(method, options.config));

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
  return recordAudit(trx, actor, {
    action: 'refund.create',
    targetType: 'invoice',
    targetId: before.invoice_id,
    before: { refunded_amount: formatMoney(before.refunded_amount, before.currency), payment_status: before.status },
    after: {
      refund_id: refund.id, payment_id: before.id, amount: formatMoney(refund.amount, before.currency), reason: refund.reason,
      refunded_amount: formatMoney(after.refunded_amount, after.currency), payment_status: after.status,
    },
  });
}

function providerError(error: unknown): unknown {
  return error instanceof RefundGatewayError ? new AppError('provider_error', error.message) : error;
}

/**
 * D-55. A refund of a payment taken through a provider's API is made there first and recorded only
 * when the provider confirms it; its failure answers 502 and records nothing.
 *
 * Concurrency: the refundable check and a `pending` reservation of the amount are written together
 * under the payment's row lock, and that short transaction commits before the provider is called.
 * A second refund of the same payment waits only for that lock, then sees the reservation and
 * cannot pass the check on the same money; the row is not locked during the (up to 10 s) provider
 * call, and no pooled connection is held through it. The provider's answer then completes the
 * reservation (status `succeeded`, refunded_amount raised) or, on failure, deletes it. The
 * reservation's id is the provider's Idempotency-Key, so a reservation left by a crash after the
 * call is finished safely by resumePendingRefunds. Inside a caller's transaction (an
 * Idempotency-Key request, D-6) the three steps share that transaction: still correct, with the
 * lock held through the call.
 *
 * A refund never changes the invoice: it stays `paid` and amount_paid keeps the money received;
 * what went back is on the payment (refundedAmount, status).
 */
export async function createRefund(db: Db, input: CreateRefundInput, actor: Actor, options: RefundOptions): Promise<RefundRow> {
  const now = options.now ?? new Date();
  const gatewayFor = gatewaysOf(options);
  const reserved = await inTransaction(db, async (trx) => {
    const payment = await lockPayment(trx, input.paymentId);
    if (!payment) {
      throw new AppError('payment_not_found', `Payment ${input.paymentId} does not exist`, { details: [{ path: 'paymentId', message: 'no such payment' }] });
    }
    assertCurrencyPrecision(input.amount, payment.currency);
    const amount = money(input.amount);
    const refundable = money(payment.amount).minus(payment.refunded_amount).minus(await pendingRefundTotal(trx, payment.id));
    if (amount.lte(0) || amount.gt(refundable)) {
      const message = `must be greater than 0 and at most what is left to refund, ${formatMoney(refundable, payment.currency)} ${payment.currency}`;
      throw new AppError('amount_exceeds_refundable', `The amount ${message}`, { details: [{ path: 'amount', message }] });
    }
    const gateway = gatewayFor(payment.payment_method);
    if (gateway && !payment.provider_reference) {
      throw new AppError('payment_not_refundable', `This ${payment.payment_method} payment has no providerReference, so the provider cannot be asked to refund it`);
    }
    const refund = await insertRefundRow(
      trx,
      { id: newUuid(), payment_id: payment.id, amount: storedAmount(input.amount, payment.currency), reason: input.reason, status: gateway ? 'pending' : 'succeeded', created_at: now },
      payment.currency,
    );
    // Money that moved outside the service (bank transfer, manual, provider_b/c): recorded at once.
    if (!gateway) await auditRefund(trx, actor, payment, await addRefundToPayment(trx, payment, refund.amount), refund);
    return { refund, payment, gateway };
  });
  if (!reserved.gateway) return reserved.refund;

  let providerRefundId: string;
  try {
    ({ providerRefundId } = await reserved.gateway.refund(reserved.payment, reserved.refund.amount, reserved.refund.id));
  } catch (error) {
    // D-55: a failure records nothing, so the reservation goes, also after a timeout whose outcome is
    // unknown. provider_a itself refuses refunds beyond the charge, so a retry cannot over-refund there;
    // a refund it did make after all shows up in its events for reconciliation.
    await deletePendingRefundRow(db, reserved.refund.id);
    throw providerError(error);
  }
  return completeRefund(db, reserved.refund.id, providerRefundId, actor);
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
    return completed;
  });
}

/**
 * Finishes reservations left `pending` by a process that stopped between the provider call and
 * its record (for the lifecycle sweep): asks the provider again with the same Idempotency-Key, which
 * answers the refund it made (or makes it now), and records it; a refusal releases the reservation;
 * an unknown outcome leaves it for the next run. Only reservations older than `olderThanMs` are
 * touched, far beyond the 10 s a live request can spend on the call.
 */
export async function resumePendingRefunds(
  db: Db,
  options: RefundOptions & { olderThanMs?: number; limit?: number },
): Promise<{ completed: number; released: number; left: number }> {
  const now = options.now ?? new Date();
  const gatewayFor = gatewaysOf(options);
  const ids = await listStalePendingRefundIds(db, new Date(now.getTime() - (options.olderThanMs ?? 10 * 60_000)), options.limit ?? 100);
  const outcome = { completed: 0, released: 0, left: 0 };
  for (const id of ids) {
    const refund = await findRefundRow(db, id);
    const payment = refund && (await findPayment(db, refund.payment_id));
    const gateway = payment && gatewayFor(payment.payment_method);
    if (!refund || !payment || !gateway) {
      outcome.left += 1;
      continue;
    }
    try {
      const { providerRefundId } = await gateway.refund(payment, refund.amount, refund.id);
      // Finished by the sweep, not by the admin who asked for it: the row's actor is `system`.
      await completeRefund(db, refund.id, providerRefundId, SYSTEM_ACTOR);
      outcome.completed += 1;
    } catch (error) {
      if (error instanceof RefundGatewayError && error.definite) {
        await deletePendingRefundRow(db, refund.id);
        outcome.released += 1;
      } else {
        outcome.left += 1;
      }
    }
  }
  return outcome;
}

export function listRefunds(db: Db, page: PageQuery, filters: { paymentId?: string }) {
  return listRefundRows(db, page, filters);
}

/** The refunds of these payments, oldest first, by payment id (a page of payments shows each one's refunds). */
export async function refundsOfPayments(db: Db, paymentIds: string[]): Promise<Map<string, RefundRow[]>> {
  const byPayment = new Map<string, RefundRow[]>(paymentIds.map((id) => [id, []]));
  for (const row of await listRefundRowsOfPayments(db, paymentIds)) byPayment.get(row.payment_id)?.push(row);
  return byPayment;
}
