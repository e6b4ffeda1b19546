import type { Decimal } from 'decimal.js';
import { money } from '../money.ts';
import { roundToCurrency } from './rounding.ts';

/** A billing period, [start, end). */
export interface Period {
  start: Date;
  end: Date;
}

/**
 * D-45: the unused part of a period at `at`, by whole seconds, as [secondsLeft, secondsInPeriod]. An instant before
 * the period leaves all of it, one after it none.
 */
export function unusedSeconds(period: Period, at: Date): [number, number] {
  const start = period.start.getTime();
  const end = period.end.getTime();
  const total = Math.round((end - start) / 1000);
  const left = Math.round((end - Math.min(Math.max(at.getTime(), start), end)) / 1000);
  return [left, total];
}

/**
 * D-45: `price` x secondsLeft / secondsInPeriod of `period` at `at`, rounded half-up to the currency (the credit for
 * the old plan's unused time, the charge for the new plan's). A period without seconds prorates to nothing.
 */
export function proratedAmount(price: Decimal | string, period: Period, at: Date, currency: string): Decimal {
  const [left, total] = unusedSeconds(period, at);
  if (total === 0) return money(0);
  return roundToCurrency(money(price).times(left).dividedBy(total), currency);
}
