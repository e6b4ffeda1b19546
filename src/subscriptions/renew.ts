import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { Clock } from '../invoices/service.ts';
import { requirePlan } from '../plans/service.ts';
import { invoicePeriod } from './invoicing.ts';
import { periodBounds } from './periods.ts';
import { lockSubscriptionRow, updateSubscriptionRow } from './repo.ts';
import { recordSubscriptionEvent } from './service.ts';

export interface RenewalResult {
  periodsAdvanced: number;
  invoicesCreated: number;
  trialsEnded: number;
  canceled: number;
}

/** Renewals stop here even for a subscription years behind: the next sweep continues. */
const MAX_PERIODS_PER_CALL = 120;

/**
 * Brings one subscription up to `asOf` (D-81): ends a finished trial, cancels at period end when
 * scheduled (without a new invoice, D-44), and advances every period that ended, invoicing each
 * one in advance, so a subscription several periods behind is invoiced once per missed period.
 * Paused and canceled subscriptions are left alone. Safe to run twice: periods already invoiced
 * are not invoiced again (D-82).
 */
export async function renewSubscription(db: Db, id: string, asOf: Date, clock: Clock = {}): Promise<RenewalResult> {
  const result: RenewalResult = { periodsAdvanced: 0, invoicesCreated: 0, trialsEnded: 0, canceled: 0 };
  await inTransaction(db, async (trx) => {
    let sub = await lockSubscriptionRow(trx, id);
    if (!sub) return;
    for (let i = 0; i < MAX_PERIODS_PER_CALL; i++) {
      if (sub.status === 'canceled' || sub.status === 'paused') return;
      if (sub.current_period_end.getTime() > asOf.getTime()) return;
      if (sub.cancel_at_period_end) {
        sub = await updateSubscriptionRow(trx, sub.id, { status: 'canceled', canceled_at: sub.current_period_end, cancel_at_period_end: false });
        await recordSubscriptionEvent(trx, 'subscription.canceled', sub);
        result.canceled += 1;
        return;
      }
      const endsTrial = sub.status === 'trialing';
      const next = sub.period_number + 1;
      const bounds = periodBounds(sub.billing_anchor, sub.billing_cycle, next);
      sub = await updateSubscriptionRow(trx, sub.id, {
        period_number: next,
        current_period_start: bounds.start,
        current_period_end: bounds.end,
        ...(endsTrial ? { status: 'active' as const } : {}),
      });
      result.periodsAdvanced += 1;
      if (endsTrial) {
        result.trialsEnded += 1;
        await recordSubscriptionEvent(trx, 'subscription.updated', sub);
      }
      const plan = await requirePlan(trx, sub.plan_id, 'planId');
      const invoiced = await invoicePeriod(trx, sub, plan, bounds, { ...clock, now: clock.now ?? asOf });
      sub = invoiced.subscription;
      if (invoiced.invoice) result.invoicesCreated += 1;
    }
  });
  return result;
}
