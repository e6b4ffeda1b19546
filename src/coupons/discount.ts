import type { Decimal } from 'decimal.js';
import { money, Money, roundToCurrency } from '../money.ts';
import type { CouponRow } from './repo.ts';

/** Whether the coupon still discounts the subscription's next invoice, after `cyclesUsed` discounted ones. */
export function couponApplies(coupon: CouponRow, cyclesUsed: number): boolean {
  if (coupon.duration === 'forever') return true;
  if (coupon.duration === 'once') return cyclesUsed < 1;
  return cyclesUsed < (coupon.duration_in_cycles ?? 0);
}

/** The discount on `price` (a positive amount, at most the price), rounded half-up to the currency. */
export function discountFor(coupon: CouponRow, price: Decimal | string, currency: string): Decimal {
  const base = money(price);
  const raw =
    coupon.percent_off !== null ? base.times(coupon.percent_off).dividedBy(100) : money(coupon.amount_off ?? 0);
  return roundToCurrency(Money.min(raw, base), currency);
}
