/**
 * The lines a plan puts on a subscription's invoices: a period's price with its coupon discount (D-46), and the
 * rest of a period after a plan change (D-45). Issuing, renewals, the change-plan preview and MRR use these.
 */
import { type CouponTerms, couponApplies, discountFor } from './coupons.ts';
import type { LineInput } from './lines.ts';
import type { Period } from './proration.ts';

/** The columns of a plan that price it. */
export interface PlanPrice {
  name: string;
  billing_cycle: string;
  base_price: string;
  currency: string;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The lines of one period's invoice (D-46): the plan's price, and the coupon's discount as a negative line while the
 * coupon lasts (`cyclesUsed` discounted invoices so far). `usesCoupon` says whether this invoice spends one of the
 * coupon's cycles.
 */
export function periodLines(
  plan: PlanPrice,
  coupon: (CouponTerms & { code: string }) | null | undefined,
  cyclesUsed: number,
  period: Period,
): { lines: LineInput[]; usesCoupon: boolean } {
  const lines: LineInput[] = [
    {
      description: `${plan.name} (${plan.billing_cycle}) ${day(period.start)} to ${day(period.end)}`,
      quantity: 1,
      unitPrice: plan.base_price,
    },
  ];
  if (!coupon || !couponApplies(coupon, cyclesUsed)) return { lines, usesCoupon: false };
  const discount = discountFor(coupon, plan.base_price, plan.currency);
  if (discount.gt(0))
    lines.push({ description: `Discount (${coupon.code})`, quantity: 1, unitPrice: discount.negated().toString() });
  return { lines, usesCoupon: true };
}

/** The line of a one-off invoice for the rest of a period after a plan change (D-45): `amount` is proratedAmount's. */
export function prorationLines(plan: PlanPrice, amount: string, until: Date): LineInput[] {
  return [
    { description: `${plan.name}: remaining time until ${day(until)} (prorated)`, quantity: 1, unitPrice: amount },
  ];
}
