import type { Decimal } from 'decimal.js';
import { money, sumMoney } from '../money.ts';
import { type LineInput, type PricedLine, priceLines } from './lines.ts';
import { roundToCurrency } from './rounding.ts';

export interface InvoiceTotals {
  lines: PricedLine[];
  subtotal: Decimal;
  taxAmount: Decimal;
  total: Decimal;
}

/** D-51: the subtotal x rate% rounded half-up once, on the whole subtotal (not per line). */
export function taxAt(subtotal: Decimal | string, ratePercent: string, currency: string): Decimal {
  return roundToCurrency(money(subtotal).times(ratePercent).dividedBy(100), currency);
}

/**
 * D-51: each line's amount (lineAmount); subtotal = their sum; tax = taxAt(subtotal, rate); total = subtotal + tax.
 * A negative total is not refused here: issuing refuses it (D-51).
 */
export function priceInvoice(lines: LineInput[], taxRatePercent: string, currency: string): InvoiceTotals {
  const priced = priceLines(lines, currency);
  const subtotal = sumMoney(priced.map((l) => l.amount));
  const taxAmount = taxAt(subtotal, taxRatePercent, currency);
  return { lines: priced, subtotal, taxAmount, total: subtotal.plus(taxAmount) };
}
