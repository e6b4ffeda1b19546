import type { Decimal } from 'decimal.js';
import { money } from '../money.ts';
import { roundToCurrency } from './rounding.ts';

/** A line as its caller writes it: a whole quantity (D-51) of a unit price, maybe finer than the currency (D-91). */
export interface LineInput {
  description: string;
  quantity: number;
  unitPrice: string;
  /** T-2: this line's own tax rates (ids), which win over its invoice's; absent: the invoice's. */
  taxRateIds?: string[];
  /**
   * T-2: the rates of the plan this line comes from when that is not the invoice's plan (a plan change's old usage):
   * archived ones apply to nothing, an empty list leaves the line to the customer's rates. Absent: the invoice's.
   */
  planTaxRateIds?: string[];
  /** A usage line's quantity, period and tiers (U-11), stored with the line. */
  usage?: unknown;
}

export interface PricedLine extends LineInput {
  amount: Decimal;
}

/** D-51: quantity x unit price, rounded half-up to the currency (3 x 0.333 USD is 1.00). */
export function lineAmount(line: Pick<LineInput, 'quantity' | 'unitPrice'>, currency: string): Decimal {
  return roundToCurrency(money(line.unitPrice).times(line.quantity), currency);
}

export function priceLines(lines: LineInput[], currency: string): PricedLine[] {
  return lines.map((line) => ({ ...line, amount: lineAmount(line, currency) }));
}
