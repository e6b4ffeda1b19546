/**
 * The sweep that finishes refund reservations left pending (resume-pending.job.ts): each is leased under its
 * payment's lock and asked of the provider again with the same Idempotency-Key, as a request asking again does.
 */
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { lockPayment } from '../payments/service.ts';
import type { RefundGateway } from './gateway.ts';
import { findRefundRow, leaseRefundRow, listStalePendingRefundIds } from './repo.ts';
import { SYSTEM_ACTOR } from '../actor.ts';
import { askProvider, gatewaysOf, leaseEnd, type RefundOptions, type Reservation } from './service.ts';

/** Leases a stale reservation for the sweep, under its payment's lock (as a request asking again does). */
async function leaseStaleRefund(
  db: Db,
  id: string,
  gatewayFor: (method: string) => RefundGateway | undefined,
  now: Date,
): Promise<Reservation | undefined> {
  return inTransaction(db, async (trx) => {
    const found = await findRefundRow(trx, id);
    const payment = found && (await lockPayment(trx, found.payment_id));
    const gateway = payment && gatewayFor(payment.payment_method);
    if (!payment || !gateway) return undefined;
    const refund = await leaseRefundRow(trx, id, leaseEnd(now), now, payment.currency);
    return refund && { refund, payment, gateway, idempotencyKey: refund.id };
  });
}

/**
 * Finishes reservations nobody asked for again: left `pending` by a process that stopped between the
 * provider call and its record, or by a call whose outcome was unknown (for a scheduled sweep). Asks the
 * provider again with the same Idempotency-Key, which answers the refund it made (or makes it now), and
 * records it; a refusal releases the reservation; an unknown outcome leaves it for the next run. Only
 * reservations older than `olderThanMs` are touched, far beyond the 10 s a live request can spend on the call.
 */
export async function resumePendingRefunds(
  db: Db,
  options: RefundOptions & { olderThanMs?: number; limit?: number },
): Promise<{ completed: number; released: number; left: number }> {
  const now = options.now ?? new Date();
  const gatewayFor = gatewaysOf(options);
  const ids = await listStalePendingRefundIds(
    db,
    new Date(now.getTime() - (options.olderThanMs ?? 10 * 60_000)),
    now,
    options.limit ?? 100,
  );
  const outcome = { completed: 0, released: 0, left: 0 };
  for (const id of ids) {
    const reservation = await leaseStaleRefund(db, id, gatewayFor, now);
    // Finished by the sweep, not by the admin who asked for it: the row's actor is `system`.
    const asked = reservation && (await askProvider(db, reservation, SYSTEM_ACTOR));
    if (asked?.kind === 'refunded') outcome.completed += 1;
    else if (asked?.kind === 'refused') outcome.released += 1;
    else outcome.left += 1;
  }
  return outcome;
}
