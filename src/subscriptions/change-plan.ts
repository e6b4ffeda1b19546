import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { addLedgerEntry } from '../credits/ledger.ts';
import { AppError } from '../errors.ts';
import type { Clock } from '../invoices/service.ts';
import { money, roundToCurrency } from '../money.ts';
import type { PlanRow } from '../plans/repo.ts';
import { requirePlan } from '../plans/service.ts';
import { invoiceProration } from './invoicing.ts';
import { unusedSeconds } from './periods.ts';
import { updateSubscriptionRow, type SubscriptionRow } from './repo.ts';
import { lockLiveSubscription, restartBilling } from './service.ts';
import { recordSubscriptionEvent } from './transitions.ts';

/** price x secondsLeft / secondsInPeriod, rounded half-up to the currency (D-45). */
function prorated(plan: PlanRow, left: number, total: number) {
  return total === 0 ? money(0) : roundToCurrency(money(plan.base_price).times(left).dividedBy(total), plan.currency);
}

async function creditUnusedTime(trx: Db, sub: SubscriptionRow, oldPlan: PlanRow, amount: ReturnType<typeof money>): Promise<void> {
  if (amount.lte(0)) return;
  await addLedgerEntry(trx, {
    customer_id: sub.customer_id,
    currency: oldPlan.currency,
    amount: amount.toString(),
    kind: 'proration',
    description: `Unused time on ${oldPlan.name}`,
  });
}

/**
 * POST .../change-plan (D-45). Prorated (default): the unused fraction of the period, by seconds,
 * of the old price goes to the credit balance and the same fraction of the new price is invoiced at
 * once (the credit applies to it). prorate false: the new price starts next period. A new billing
 * cycle restarts the period now (prorated) or at the current period's end (not prorated).
 * Trialing subscriptions swap plans without proration.
 */
export async function changePlan(db: Db, id: string, input: { newPlanId: string; prorate: boolean }, clock: Clock = {}): Promise<SubscriptionRow> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const sub = await lockLiveSubscription(trx, id);
    if (input.newPlanId === sub.plan_id) throw new AppError('same_plan', 'The subscription is already on this plan', { details: [{ path: 'newPlanId', message: 'is the current plan' }] });
    const oldPlan = await requirePlan(trx, sub.plan_id, 'planId');
    const newPlan = await requirePlan(trx, input.newPlanId, 'newPlanId');
    if (!newPlan.active) throw new AppError('plan_inactive', `Plan ${newPlan.id} is inactive`, { details: [{ path: 'newPlanId', message: 'is inactive' }] });
    if (newPlan.currency !== oldPlan.currency) {
      throw new AppError('currency_mismatch', `The new plan is in ${newPlan.currency}, the subscription in ${oldPlan.currency}`, { details: [{ path: 'newPlanId', message: 'has another currency' }] });
    }
    const cycleChanges = newPlan.billing_cycle !== sub.billing_cycle;
    let changed: SubscriptionRow;

    if (sub.status === 'trialing') {
      changed = await updateSubscriptionRow(trx, id, { plan_id: newPlan.id, billing_cycle: newPlan.billing_cycle });
    } else if (!input.prorate) {
      // The new plan bills from the next period; a new cycle is anchored where the current period ends.
      changed = await updateSubscriptionRow(trx, id, cycleChanges
        ? { plan_id: newPlan.id, billing_cycle: newPlan.billing_cycle, billing_anchor: sub.current_period_end, period_number: -1 }
        : { plan_id: newPlan.id });
    } else {
      const [left, total] = unusedSeconds(sub.current_period_start, sub.current_period_end, now);
      // Paused subscriptions are not billing: nothing unused to credit.
      const billing = sub.status !== 'paused';
      if (billing) await creditUnusedTime(trx, sub, oldPlan, prorated(oldPlan, left, total));
      const swapped = await updateSubscriptionRow(trx, id, { plan_id: newPlan.id, billing_cycle: newPlan.billing_cycle });
      if (cycleChanges) changed = billing ? await restartBilling(trx, swapped, now, clock) : swapped;
      else {
        const charge = prorated(newPlan, left, total);
        if (billing && charge.gt(0)) await invoiceProration(trx, swapped, newPlan, charge.toString(), sub.current_period_end, { ...clock, now });
        changed = swapped;
      }
    }
    await recordSubscriptionEvent(trx, 'subscription.updated', changed);
    return changed;
  });
}
