import type { Decimal } from 'decimal.js';
import { money, roundToCurrency, sumMoney } from '../money.ts';

export interface LineInput {
  description: string;
  quantity: number;
  unitPrice: string;
}

export interface PricedLine extends LineInput {
  amount: Decimal;
}

export interface InvoiceTotals {
  lines: PricedLine[];
  subtotal: Decimal;
  taxAmount: Decimal;
  total: Decimal;
}

/**
 * D-51: each line amount = quantity x unit price rounded half-up to the currency; subtotal = their
 * sum; tax = subtotal x rate% rounded half-up; total = subtotal + tax.
 */
export function priceInvoice(lines: LineInput[], taxRatePercent: string, currency: string): InvoiceTotals {
  const priced = lines.map((line) => ({
    ...line,
    amount: roundToCurrency(money(line.unitPrice).times(line.quantity), currency),
  }));
  const subtotal = sumMoney(priced.map((l) => l.amount));
  const taxAmount = roundToCurrency(subtotal.times(taxRatePercent).dividedBy(100), currency);
  return { lines: priced, subtotal, taxAmount, total: subtotal.plus(taxAmount) };
}
