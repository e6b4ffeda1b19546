import type { Db } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import { cachedChargesOfPlans } from '../metering/charges.ts';
import { formatMoney } from '../money.ts';
import { planCurrency } from '../plans/service.ts';
import { trialCovers } from '../subscriptions/periods.ts';
import { findSubscription } from '../subscriptions/service.ts';
import { type PeriodUsage, usageOfPeriod } from '../usage/read.ts';
import { billedPeriodsOf, usageEventBatches } from '../usage/service.ts';

/**
 * U-9: a subscription's usage in its current period, or in the closed period starting at `periodStart`. With
 * `customerId` (an API key's) another customer's subscription is not found.
 */
export async function subscriptionUsage(
  db: Db,
  subscriptionId: string,
  options: { customerId?: string; periodStart?: Date },
): Promise<PeriodUsage> {
  const sub = await findSubscription(db, subscriptionId);
  if (!sub || (options.customerId !== undefined && sub.customer_id !== options.customerId))
    throw notFound('Subscription');
  const current = { start: sub.current_period_start, end: sub.current_period_end };
  let period = current;
  if (options.periodStart && options.periodStart.getTime() !== current.start.getTime()) {
    const closed = await billedPeriodsOf(db, sub.customer_id, sub.id);
    const found = closed.find((p) => p.start.getTime() === options.periodStart!.getTime());
    if (!found)
      throw new AppError('invalid_request', "periodStart is not the start of one of the subscription's periods", {
        details: [{ path: 'periodStart', message: 'must be the start of the current or a billed period' }],
      });
    period = found;
  }
  return usageOfPeriod(db, {
    customerId: sub.customer_id,
    subscriptionId: sub.id,
    period,
    currency: await planCurrency(db, sub.plan_id),
    // U-8: a trial's period is billed at 0, read while the trial runs or after it ended (a closed trial period).
    trial: (sub.status === 'trialing' && period === current) || trialCovers(sub.trial_end, period.end),
    charges: (await cachedChargesOfPlans(db, [sub.plan_id])).get(sub.plan_id)!,
  });
}

export function serialiseUsage(usage: PeriodUsage) {
  return {
    subscriptionId: usage.subscriptionId,
    periodStart: usage.periodStart.toISOString(),
    periodEnd: usage.periodEnd.toISOString(),
    currency: usage.currency,
    amount: formatMoney(usage.amount, usage.currency),
    charges: usage.charges.map((c) => ({ ...c, amount: formatMoney(c.amount, usage.currency) })),
  };
}

/** The events of a subscription's period (as subscriptionUsage picks it), in batches: the usage CSV export. */
export async function* subscriptionUsageEvents(db: Db, subscriptionId: string, periodStart?: Date) {
  const usage = await subscriptionUsage(db, subscriptionId, { periodStart });
  const sub = (await findSubscription(db, subscriptionId))!;
  yield* usageEventBatches(db, {
    customerId: sub.customer_id,
    subscriptionId,
    from: usage.periodStart,
    to: usage.periodEnd,
  });
}
