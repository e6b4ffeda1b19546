/**
 * Auto-charge and dunning retries for the lifecycle sweep (D-82, D-83). An attempt is written and
 * committed (pending, with its idempotency key) before provider_a is called, and the call is made while
 * that row is locked: a concurrent sweep skips it, and a process killed mid-call leaves it pending for the
 * next sweep, which sends the same key again, so the provider answers the first result and never
 * charges twice. A timeout is an unknown outcome: the attempt stays pending; it is not a decline.
 *
 * The invoice is locked with the attempt and stays locked through the call, so a manual payment or credit note
 * cannot settle it while a charge is on its way. An attempt whose invoice has nothing due any more when it is
 * (re-)sent (paid or voided after a crash left the attempt pending) is canceled, not sent: if the first send
 * never reached provider_a, sending now would charge for nothing due. If it did reach it and charged, that
 * payment arrives as provider_a's `payment_intent.succeeded` webhook and becomes store credit (D-62).
 */
import type { AppDeps } from '../app-deps.ts';
import { SYSTEM_ACTOR } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { lockInvoice } from '../invoices/service.ts';
import { applyProviderPayment } from '../payments/provider-payment.ts';
import { ProviderCallError } from '../providers/call.ts';
import { chargeProviderAOffSession, type ProviderAOptions } from '../providers/provider-a.ts';
import { chargeTestMethod } from '../providers/test-clock-methods.ts';
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import {
  claimChargeCandidates,
  claimDueCases,
  findDefaultProviderAMethod,
  finishAttempt,
  insertChargeAttempts,
  listPendingAttemptIds,
  lockOpenCase,
  lockPendingAttempt,
  updateCase,
  type ChargeAttemptRow,
} from './repo.ts';
import { endDunningIfPaid, recordPaymentFailure, recordRetryFailure, resolveDunningForInvoice } from './service.ts';

const BATCH = 50;

const attemptKey = (invoiceId: string, attempt: number) => `charge_${invoiceId}_${attempt}`;

interface ChargeCounts {
  charged: number;
  chargeFailures: number;
  dunningStarted: number;
  dunningResolved: number;
  dunningFailed: number;
}

const noCounts = (): ChargeCounts => ({
  charged: 0,
  chargeFailures: 0,
  dunningStarted: 0,
  dunningResolved: 0,
  dunningFailed: 0,
});

/** Records what the provider said about one locked attempt, with its consequences, in the attempt's transaction. */
async function settleAttempt(
  trx: Parameters<typeof lockPendingAttempt>[0],
  attempt: ChargeAttemptRow,
  outcome: Awaited<ReturnType<typeof chargeProviderAOffSession>>,
  now: Date,
  counts: ChargeCounts,
): Promise<void> {
  if (outcome.status === 'succeeded') {
    await finishAttempt(trx, attempt.id, {
      status: 'succeeded',
      provider_reference: outcome.paymentIntentId,
      failure_reason: null,
      completed_at: now,
    });
    const hadCase = Boolean(await lockOpenCase(trx, attempt.invoice_id));
    const before = await lockInvoice(trx, attempt.invoice_id);
    const paid = await applyProviderPayment(trx, {
      paymentMethod: 'provider_a',
      reference: outcome.paymentIntentId,
      invoiceId: attempt.invoice_id,
      amount: attempt.amount,
      currency: attempt.currency,
      now,
    });
    if (paid.outcome === 'recorded') await endDunningIfPaid(trx, attempt.invoice_id, now);
    const after = await lockInvoice(trx, attempt.invoice_id);
    // The sweep's charge is the service's own action (C-11); a resolved case's reactivation follows from this payment.
    await recordAudits(trx, SYSTEM_ACTOR, [
      {
        action: 'invoice.auto_charge',
        targetType: 'invoice',
        targetId: attempt.invoice_id,
        before: { status: before?.status, amount_paid: before?.amount_paid },
        after: { status: after?.status, amount_paid: after?.amount_paid },
      },
    ]);
    counts.charged += 1;
    if (hadCase && !(await lockOpenCase(trx, attempt.invoice_id))) counts.dunningResolved += 1;
    return;
  }
  await finishAttempt(trx, attempt.id, {
    status: 'declined',
    provider_reference: outcome.paymentIntentId,
    failure_reason: outcome.reason,
    completed_at: now,
  });
  counts.chargeFailures += 1;
  const invoice = await lockInvoice(trx, attempt.invoice_id);
  if (!invoice) return;
  const open = await lockOpenCase(trx, attempt.invoice_id);
  if (open) {
    if ((await recordRetryFailure(trx, open, invoice, outcome.reason, now, SYSTEM_ACTOR)).failed)
      counts.dunningFailed += 1;
  } else if (
    (
      await recordPaymentFailure(trx, {
        invoiceId: invoice.id,
        paymentMethod: 'provider_a',
        failureReason: outcome.reason,
        now,
        actor: SYSTEM_ACTOR,
      })
    ).dunningStarted
  ) {
    counts.dunningStarted += 1;
  }
}

/** The sweep's options: the provider call's, and whose invoices it charges (issue 39, TC-4). */
export interface ChargeStepOptions extends ProviderAOptions {
  scope?: CustomerScope;
}

/**
 * Sends every pending attempt (this sweep's and any left by a crash) of the scope's customers, each under its row
 * lock: to provider_a, or, for a test clock's customers, to the test methods (TC-5), recorded the same way.
 */
async function sendPendingAttempts(deps: AppDeps, now: Date, options: ChargeStepOptions): Promise<ChargeCounts> {
  const { scope = REAL_CUSTOMERS, ...providerOptions } = options;
  const charge: typeof chargeProviderAOffSession =
    scope.kind === 'testClock'
      ? async (_config, input) => chargeTestMethod(input)
      : (config, input) => chargeProviderAOffSession(config, input, providerOptions);
  const counts = noCounts();
  const seen: string[] = [];
  for (;;) {
    const ids = await listPendingAttemptIds(deps.db, BATCH, seen, scope);
    if (ids.length === 0) return counts;
    seen.push(...ids);
    for (const id of ids) {
      try {
        await inTransaction(deps.db, async (trx) => {
          const attempt = await lockPendingAttempt(trx, id);
          if (!attempt) return; // another sweep holds it, or it is done
          const invoice = await lockInvoice(trx, attempt.invoice_id);
          if (!invoice || !amountDue(invoice).gt(0)) {
            await finishAttempt(trx, attempt.id, {
              status: 'canceled',
              provider_reference: null,
              failure_reason: 'not sent: the invoice has nothing due',
              completed_at: now,
            });
            if (await resolveDunningForInvoice(trx, attempt.invoice_id, now, SYSTEM_ACTOR)) counts.dunningResolved += 1;
            return;
          }
          const outcome = await charge(deps.config, {
            invoiceId: attempt.invoice_id,
            amount: attempt.amount,
            currency: attempt.currency,
            providerMethodId: attempt.provider_method_id,
            idempotencyKey: attempt.idempotency_key,
          });
          await settleAttempt(trx, attempt, outcome, now, counts);
        });
      } catch (error) {
        // Unknown outcome (timeout, 5xx): the attempt stays pending and is re-sent with its key next time.
        if (error instanceof ProviderCallError)
          deps.logger.warn(
            { attemptId: id, err: error.message },
            'auto-charge outcome unknown; will retry with the same key',
          );
        else deps.logger.error({ attemptId: id, err: error }, 'auto-charge attempt failed');
      }
    }
  }
}

/** First charges of open invoices whose customer has a default provider_a method (D-83). */
export async function autoChargeDueInvoices(
  deps: AppDeps,
  asOf: Date,
  options: ChargeStepOptions = {},
): Promise<{ charged: number; chargeFailures: number; dunningStarted: number }> {
  for (;;) {
    const claimed = await inTransaction(deps.db, async (trx) => {
      const candidates = await claimChargeCandidates(trx, BATCH, options.scope ?? REAL_CUSTOMERS);
      await insertChargeAttempts(
        trx,
        candidates.map((c) => ({
          invoice_id: c.invoice_id,
          attempt: 1,
          idempotency_key: attemptKey(c.invoice_id, 1),
          amount: c.amount_due,
          currency: c.currency,
          provider_method_id: c.provider_method_id,
        })),
      );
      return candidates.length;
    });
    if (claimed < BATCH) break;
  }
  const counts = await sendPendingAttempts(deps, asOf, options);
  return { charged: counts.charged, chargeFailures: counts.chargeFailures, dunningStarted: counts.dunningStarted };
}

/** Retries of open dunning cases whose next attempt is due by `asOf`. */
export async function retryDunning(
  deps: AppDeps,
  asOf: Date,
  options: ChargeStepOptions = {},
): Promise<{
  dunning: number;
  dunningResolved: number;
  dunningFailed: number;
  charged: number;
  chargeFailures: number;
}> {
  let dunning = 0;
  let closedWithoutMethod = 0;
  let resolvedWithoutCharge = 0;
  for (;;) {
    const claimed = await inTransaction(deps.db, async (trx) => {
      const cases = await claimDueCases(trx, asOf, BATCH, options.scope ?? REAL_CUSTOMERS);
      for (const c of cases) {
        const invoice = await lockInvoice(trx, c.invoice_id);
        if (!invoice)
          throw new AppError('invoice_not_found', `Invoice ${c.invoice_id} of dunning case ${c.id} does not exist`);
        dunning += 1;
        const due = amountDue(invoice);
        if (!due.gt(0)) {
          // Voided, or settled by a path that does not pay (nothing due): nothing to recover, the case ends.
          if (await resolveDunningForInvoice(trx, c.invoice_id, asOf, SYSTEM_ACTOR)) resolvedWithoutCharge += 1;
          continue;
        }
        const method = await findDefaultProviderAMethod(trx, c.customer_id);
        if (!method) {
          // Nothing to charge with: this retry fails as a decline would.
          if (
            (await recordRetryFailure(trx, c, invoice, 'no default provider_a payment method', asOf, SYSTEM_ACTOR))
              .failed
          )
            closedWithoutMethod += 1;
          continue;
        }
        const attempt = c.attempt + 1;
        await insertChargeAttempts(trx, [
          {
            invoice_id: c.invoice_id,
            attempt,
            idempotency_key: attemptKey(c.invoice_id, attempt),
            amount: due.toString(),
            currency: invoice.currency,
            provider_method_id: method,
          },
        ]);
        // In flight: not due again until this attempt's outcome schedules the next one.
        await updateCase(trx, c.id, { next_attempt_at: null });
      }
      return cases.length;
    });
    if (claimed < BATCH) break;
  }
  const counts = await sendPendingAttempts(deps, asOf, options);
  return {
    dunning,
    dunningResolved: counts.dunningResolved + resolvedWithoutCharge,
    dunningFailed: counts.dunningFailed + closedWithoutMethod,
    charged: counts.charged,
    chargeFailures: counts.chargeFailures,
  };
}
