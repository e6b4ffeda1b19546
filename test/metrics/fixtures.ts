import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createCoupon } from '../../src/coupons/service.ts';
import type { CreateCouponInput } from '../../src/coupons/schema.ts';
import type { PlanRow } from '../../src/plans/repo.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { insertCustomer } from '../helpers/factories.ts';

let coupons = 0;

/** A coupon through the service (forever unless given), with a code unique to the run. */
export async function makeCoupon(db: Knex, input: Partial<CreateCouponInput>) {
  coupons += 1;
  return createCoupon(
    db,
    { code: `M${coupons}X${process.pid}`, duration: 'forever', ...input } as CreateCouponInput,
    SYSTEM_ACTOR,
  );
}

/** A new customer subscribed to `plan` through the service. */
export async function subscribe(
  db: Knex,
  plan: PlanRow,
  options: { couponCode?: string; trialDays?: number; now?: Date; name?: string } = {},
) {
  const customer = await insertCustomer(db, options.name ? { name: options.name } : {});
  return createSubscription(
    db,
    {
      customerId: customer.id,
      planId: plan.id,
      billingCycle: plan.billing_cycle,
      couponCode: options.couponCode,
      trialDays: options.trialDays,
    },
    SYSTEM_ACTOR,
    { now: options.now },
  );
}

/**
 * C-10 by the test's own arithmetic, in integer minor units: each subscription's net invoice amount over the
 * months of its cycle, rounded half-up to the minor unit, then summed (C-18). `digits` is the currency's minor unit.
 */
export function expectedMrr(subs: { netMinor: number; months: 1 | 3 | 12 }[], digits = 2): string {
  // C-18: each subscription's monthly contribution is rounded (half up) to the minor unit, then they are summed.
  const minor = subs.reduce(
    (sum, s) => sum + (BigInt(s.netMinor) * 2n + BigInt(s.months)) / (2n * BigInt(s.months)),
    0n,
  );
  const text = minor.toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}
