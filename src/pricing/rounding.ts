import type { Decimal } from 'decimal.js';
import { Money, minorUnits, money } from '../money.ts';

/**
 * Pricing's one rounding rule (D-51, D-91): half-up (a tie goes away from zero) to the currency's minor unit. Each
 * computed amount (a line, a tax, a discount, a proration) is rounded once, from exact inputs, so a unit price finer
 * than the currency keeps its digits until its line is priced.
 */
export function roundToCurrency(amount: Decimal | string, currency: string): Decimal {
  return money(amount).toDecimalPlaces(minorUnits(currency), Money.ROUND_HALF_UP);
}
