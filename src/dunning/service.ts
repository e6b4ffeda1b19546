/**
 * Dunning (D-83): a failed charge puts the invoice's subscription `past_due` and schedules retries on
 * `billing.dunning_schedule_days` (days after the first failure); a payment by any path resolves the
 * case and reactivates; the last failed retry ends it with `billing.dunning_final_action`.
 */
import { queueEmails } from '../emails/outbox.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { AppError } from '../errors.ts';
import { amountDue } from '../pricing/amount-due.ts';
import type { InvoiceRow } from '../invoices/repo.ts';
import { findInvoice, lockInvoice } from '../invoices/service.ts';
import { formatMoney } from '../money.ts';
import { getSetting } from '../settings/service.ts';
import type { SubscriptionStatus } from '../subscriptions/repo.ts';
import { lockSubscription } from '../subscriptions/service.ts';
import { transitionSubscription } from '../subscriptions/transitions.ts';
import { insertOpenCase, listOpenCaseInvoiceIds, lockOpenCase, updateCase, type DunningCaseRow } from './repo.ts';

const DAY_MS = 86_400_000;

export interface PaymentFailure {
  invoiceId: string;
  subscriptionId?: string | null;
  paymentMethod: string;
  failureReason: string;
  now: Date;
  /**
   * Who to record the subscription's move as (the sweep: `system`); left out when the caller's own audit row
   * covers it.
   */
  actor?: Actor;
}

/** The audit action of a move dunning makes (C-11). */
const DUNNING_MOVES: Partial<Record<SubscriptionStatus, string>> = {
  past_due: 'subscription.mark_past_due',
  active: 'subscription.reactivate',
  canceled: 'subscription.cancel',
};

function dunningEventData(c: DunningCaseRow) {
  return {
    invoiceId: c.invoice_id,
    subscriptionId: c.subscription_id,
    customerId: c.customer_id,
    attempt: c.attempt,
    nextAttemptAt: c.next_attempt_at?.toISOString() ?? null,
  };
}

/** The retry after `failures` failed charges, counted from the first failure; null when the schedule is spent. */
function nextAttemptAt(schedule: number[], startedAt: Date, failures: number): Date | null {
  const days = schedule[failures - 1];
  return days === undefined ? null : new Date(startedAt.getTime() + days * DAY_MS);
}

/**
 * Dunning's policy: it moves only a subscription in one of `from` (a paused or canceled one is left as it is).
 * With an `actor`, the move is an audit row of its own.
 */
async function moveSubscription(
  trx: Db,
  id: string | null,
  from: SubscriptionStatus[],
  to: SubscriptionStatus,
  now: Date,
  actor?: Actor,
): Promise<void> {
  if (!id) return;
  const sub = await lockSubscription(trx, id);
  if (!sub || !from.includes(sub.status)) return;
  const moved = await transitionSubscription(trx, sub, to, now);
  if (actor) {
    await recordAudits(trx, actor, [
      {
        action: DUNNING_MOVES[to]!,
        targetType: 'subscription',
        targetId: id,
        before: { status: sub.status, canceled_at: sub.canceled_at },
        after: { status: moved.status, canceled_at: moved.canceled_at },
      },
    ]);
  }
}

/** M-3 `payment.failed` (each failed attempt of a case) and `dunning.final` (the case exhausted), once each. */
function dunningEmail(
  type: 'payment.failed' | 'dunning.final',
  c: Pick<DunningCaseRow, 'id'>,
  invoice: InvoiceRow,
  attempt: number,
  nextAttemptAt: Date | null,
  finalAction?: string,
) {
  return {
    type,
    customerId: invoice.customer_id,
    occasion: `${c.id}:${attempt}`,
    data: {
      invoiceId: invoice.id,
      amountDue: amountDue(invoice).toString(),
      currency: invoice.currency,
      nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
      ...(finalAction ? { finalAction } : {}),
    },
  };
}

async function paymentFailedEvent(
  trx: Db,
  invoice: InvoiceRow,
  paymentMethod: string,
  failureReason: string,
): Promise<void> {
  await recordEvents(trx, [
    {
      type: 'payment.failed',
      data: {
        paymentId: null,
        invoiceId: invoice.id,
        customerId: invoice.customer_id,
        amount: formatMoney(amountDue(invoice), invoice.currency),
        currency: invoice.currency,
        paymentMethod,
        failureReason,
      },
    },
  ]);
}

/**
 * A payment of the invoice failed (a declined auto-charge, or a provider's report): `payment.failed`,
 * then dunning starts unless the invoice is already in it. The subscription is the given one, else the
 * invoice's; an invoice without one is still dunned (retried and closed) but changes no subscription.
 */
export async function recordPaymentFailure(trx: Db, input: PaymentFailure): Promise<{ dunningStarted: boolean }> {
  const invoice = await lockInvoice(trx, input.invoiceId);
  if (!invoice) throw new AppError('invoice_not_found', `Invoice ${input.invoiceId} does not exist`);
  await paymentFailedEvent(trx, invoice, input.paymentMethod, input.failureReason);
  if (invoice.status !== 'issued' && invoice.status !== 'overdue') return { dunningStarted: false };
  if (await lockOpenCase(trx, invoice.id)) return { dunningStarted: false };
  const schedule = await getSetting(trx, 'billing.dunning_schedule_days');
  const subscriptionId = input.subscriptionId ?? invoice.subscription_id;
  const started = await insertOpenCase(trx, {
    invoice_id: invoice.id,
    subscription_id: subscriptionId,
    customer_id: invoice.customer_id,
    attempt: 1,
    next_attempt_at: nextAttemptAt(schedule, input.now, 1),
    started_at: input.now,
  });
  if (!started) return { dunningStarted: false };
  await moveSubscription(trx, subscriptionId, ['active', 'trialing'], 'past_due', input.now, input.actor);
  await recordEvents(trx, [{ type: 'dunning.started', data: dunningEventData(started) }]);
  await queueEmails(trx, [dunningEmail('payment.failed', started, invoice, 1, started.next_attempt_at)]);
  return { dunningStarted: true };
}

/**
 * A retry of an open case failed: `payment.failed`, and the next retry is scheduled, or, when the
 * schedule is spent, `dunning.failed` and the final action. Answers whether the case ended.
 */
export async function recordRetryFailure(
  trx: Db,
  c: DunningCaseRow,
  invoice: InvoiceRow,
  failureReason: string,
  now: Date,
  actor?: Actor,
): Promise<{ failed: boolean }> {
  await paymentFailedEvent(trx, invoice, 'provider_a', failureReason);
  const schedule = await getSetting(trx, 'billing.dunning_schedule_days');
  const failures = c.attempt + 1;
  const next = nextAttemptAt(schedule, c.started_at, failures);
  if (next) {
    await updateCase(trx, c.id, { attempt: failures, next_attempt_at: next });
    await queueEmails(trx, [dunningEmail('payment.failed', c, invoice, failures, next)]);
    return { failed: false };
  }
  const closed = await updateCase(trx, c.id, {
    attempt: failures,
    next_attempt_at: null,
    status: 'failed',
    closed_at: now,
  });
  await recordEvents(trx, [{ type: 'dunning.failed', data: dunningEventData(closed) }]);
  const finalAction = await getSetting(trx, 'billing.dunning_final_action');
  await queueEmails(trx, [dunningEmail('dunning.final', c, invoice, failures, null, finalAction)]);
  if (finalAction === 'cancel') {
    await moveSubscription(
      trx,
      c.subscription_id,
      ['past_due', 'active', 'trialing', 'paused'],
      'canceled',
      now,
      actor,
    );
  }
  return { failed: true };
}

/**
 * Called where an invoice is paid or voided: an open case on it resolves and the subscription is active again
 * (audited as `actor` when given: the sweep; an admin's payment is covered by its own row).
 */
export async function resolveDunningForInvoice(trx: Db, invoiceId: string, now: Date, actor?: Actor): Promise<boolean> {
  const open = await lockOpenCase(trx, invoiceId);
  if (!open) return false;
  const resolved = await updateCase(trx, open.id, { status: 'resolved', next_attempt_at: null, closed_at: now });
  await moveSubscription(trx, resolved.subscription_id, ['past_due'], 'active', now, actor);
  await recordEvents(trx, [{ type: 'dunning.resolved', data: dunningEventData(resolved) }]);
  return true;
}

/** A payment that left its invoice paid ends the invoice's open case (a payment by any path resolves it). */
export async function endDunningIfPaid(trx: Db, invoiceId: string, now: Date): Promise<void> {
  const invoice = await findInvoice(trx, invoiceId);
  if (invoice?.status === 'paid') await resolveDunningForInvoice(trx, invoiceId, now);
}

/**
 * Ends the customer's open cases whose invoices are now paid or void (after a credit, a credit note, a status
 * change).
 */
export async function resolveDunningOfSettledInvoices(trx: Db, customerId: string, now: Date): Promise<void> {
  for (const invoiceId of await listOpenCaseInvoiceIds(trx, customerId)) {
    const invoice = await findInvoice(trx, invoiceId);
    if (invoice && (invoice.status === 'paid' || invoice.status === 'void'))
      await resolveDunningForInvoice(trx, invoiceId, now);
  }
}
