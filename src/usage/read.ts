/**
 * Usage of one period of a subscription (U-9), read from the running aggregates (a few rows, never the events) and
 * priced by src/pricing/usage.ts, the module that prices the invoice's usage lines.
 */
import type { Db } from '../db/knex.ts';
import { chargesById, chargeTerms, type ChargeWithMetric } from '../metering/charges.ts';
import { money, sumMoney } from '../money.ts';
import { priceUsage } from '../pricing/usage.ts';
import { aggregatesOfPeriod } from './repo.ts';

export interface UsageSubject {
  customerId: string;
  subscriptionId: string;
  period: { start: Date; end: Date };
  currency: string;
  /** A trial's usage is shown and billed at 0 (U-8). */
  trial: boolean;
  /** The plan's charges: each is answered, with quantity 0 when nothing was used. */
  charges: ChargeWithMetric[];
}

export async function usageOfPeriod(db: Db, subject: UsageSubject) {
  const aggregates = await aggregatesOfPeriod(db, subject.customerId, subject.subscriptionId, subject.period.start);
  const quantityOf = new Map(aggregates.map((a) => [a.charge_id, a.quantity]));
  const planned = new Set(subject.charges.map((c) => c.id));
  // Usage of charges the subscription's plan no longer has (before a plan change) is shown too.
  const former = await chargesById(
    db,
    aggregates.map((a) => a.charge_id).filter((id) => !planned.has(id)),
  );
  const charges = [...subject.charges, ...former.values()].map((charge) => {
    const quantity = money(quantityOf.get(charge.id) ?? '0');
    const price = priceUsage(chargeTerms(charge), quantity, subject.currency);
    return {
      chargeId: charge.id,
      metricCode: charge.metric.code,
      aggregation: charge.metric.aggregation,
      quantity: quantity.toFixed(),
      amount: subject.trial ? money(0) : price.amount,
      tiers: price.tiers,
    };
  });
  return {
    subscriptionId: subject.subscriptionId,
    periodStart: subject.period.start,
    periodEnd: subject.period.end,
    currency: subject.currency,
    amount: sumMoney(charges.map((c) => c.amount)),
    charges,
  };
}

export type PeriodUsage = Awaited<ReturnType<typeof usageOfPeriod>>;
