import type { Decimal } from 'decimal.js';
import { Money, money } from '../money.ts';
import { roundToCurrency } from './rounding.ts';

/** The terms of a coupon (D-46) that pricing reads: a coupons row has them. */
export interface CouponTerms {
  percent_off: string | null;
  amount_off: string | null;
  duration: 'once' | 'repeating' | 'forever';
  duration_in_cycles: number | null;
}

/** Whether the coupon still discounts a subscription's next invoice, after `cyclesUsed` discounted ones. */
export function couponApplies(coupon: CouponTerms, cyclesUsed: number): boolean {
  if (coupon.duration === 'forever') return true;
  if (coupon.duration === 'once') return cyclesUsed < 1;
  return cyclesUsed < (coupon.duration_in_cycles ?? 0);
}

/**
 * The discount on `price` (a non-negative amount): percentOff of it or amountOff, never more than the price, so a
 * discounted invoice never falls below zero; rounded half-up to the currency.
 */
export function discountFor(coupon: CouponTerms, price: Decimal | string, currency: string): Decimal {
  const base = money(price);
  const raw =
    coupon.percent_off !== null ? base.times(coupon.percent_off).dividedBy(100) : money(coupon.amount_off ?? 0);
  return roundToCurrency(Money.min(raw, base), currency);
}
