/**
 * Tax by named rates (taxes.md T-4), pure functions on decimals. A line's amount is net under exclusive rates and
 * gross under its inclusive rate (one at most); each rate's tax is summed unrounded over the invoice and rounded
 * once, half up, to the currency. For an inclusive rate the rounded net is the gross minus the rounded tax, so a
 * tax-inclusive total never moves. Discounts are negative lines carrying the same rates, so they reduce the net
 * before tax. The invoice-wide percent of D-51 (`priceInvoice`) is the case of no named rate.
 */
import type { Decimal } from 'decimal.js';
import { money, sumMoney } from '../money.ts';
import { type LineInput, type PricedLine, priceLines } from './lines.ts';
import { roundToCurrency } from './rounding.ts';
import type { InvoiceTotals } from './totals.ts';

/** The terms of a rate that price a line (a tax_rates row has them). */
export interface TaxTerms {
  id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
}

/** One rate's share of an invoice (T-5): what it was charged on and how much. */
export interface TaxEntry {
  taxRateId: string | null;
  name: string;
  percentage: string;
  inclusive: boolean;
  taxableAmount: Decimal;
  amount: Decimal;
}

export interface TaxedTotals extends InvoiceTotals {
  taxes: TaxEntry[];
}

interface Sums {
  terms: TaxTerms;
  /** Exclusive: the unrounded net it applies to. Inclusive: the gross amounts (already rounded lines). */
  base: Decimal;
  tax: Decimal;
}

const fraction = (percentage: string) => money(percentage).dividedBy(100);

/** T-4: the invoice of `lines`, each with the rates that apply to it (`ratesOf[i]` for `lines[i]`). */
export function priceTaxedInvoice(lines: LineInput[], ratesOf: TaxTerms[][], currency: string): TaxedTotals {
  const priced: PricedLine[] = priceLines(lines, currency);
  const sums = new Map<string, Sums>();
  const sumOf = (terms: TaxTerms) => {
    const entry = sums.get(terms.id) ?? { terms, base: money(0), tax: money(0) };
    sums.set(terms.id, entry);
    return entry;
  };
  priced.forEach((line, i) => {
    const rates = ratesOf[i] ?? [];
    const inclusive = rates.find((r) => r.inclusive);
    let net = line.amount;
    if (inclusive) {
      net = line.amount.dividedBy(fraction(inclusive.percentage).plus(1));
      const sum = sumOf(inclusive);
      sum.base = sum.base.plus(line.amount);
      sum.tax = sum.tax.plus(line.amount.minus(net));
    }
    for (const rate of rates) {
      if (rate.inclusive) continue;
      const sum = sumOf(rate);
      sum.base = sum.base.plus(net);
      sum.tax = sum.tax.plus(net.times(fraction(rate.percentage)));
    }
  });
  const taxes: TaxEntry[] = [...sums.values()].map(({ terms, base, tax }) => {
    const amount = roundToCurrency(tax, currency);
    return {
      taxRateId: terms.id,
      name: terms.name,
      percentage: money(terms.percentage).toString(),
      inclusive: terms.inclusive,
      taxableAmount: terms.inclusive ? base.minus(amount) : roundToCurrency(base, currency),
      amount,
    };
  });
  const inclusiveTax = sumMoney(taxes.filter((t) => t.inclusive).map((t) => t.amount));
  const subtotal = sumMoney(priced.map((l) => l.amount)).minus(inclusiveTax);
  const taxAmount = sumMoney(taxes.map((t) => t.amount));
  return { lines: priced, subtotal, taxAmount, total: subtotal.plus(taxAmount), taxes };
}

/**
 * T-6: a part (`amount`) of an invoice whose total is `total` carries that share of each of its taxes, each figure
 * rounded half up to the currency (a credit of the whole total carries the invoice's taxes exactly).
 */
export function proportionalTaxes(
  taxes: readonly TaxEntry[],
  amount: Decimal | string,
  total: Decimal | string,
  currency: string,
): TaxEntry[] {
  const share = money(total).isZero() ? money(0) : money(amount).dividedBy(total);
  return taxes.map((t) => ({
    ...t,
    taxableAmount: roundToCurrency(t.taxableAmount.times(share), currency),
    amount: roundToCurrency(t.amount.times(share), currency),
  }));
}

/**
 * T-5: an invoice priced by D-51's one percent reports it as one entry named `Tax` (none at 0%), so every invoice
 * answers its taxes the same way.
 */
export function flatRateTaxes(taxRate: string, subtotal: Decimal | string, taxAmount: Decimal | string): TaxEntry[] {
  if (money(taxRate).isZero()) return [];
  return [
    {
      taxRateId: null,
      name: 'Tax',
      percentage: money(taxRate).toString(),
      inclusive: false,
      taxableAmount: money(subtotal),
      amount: money(taxAmount),
    },
  ];
}
