/**
 * Tax by named rates (taxes.md T-4), pure functions on decimals. A line's amount is net under exclusive rates and
 * gross under its inclusive rate (one at most), whose net is gross / (1 + rate); every rate of a line applies to that
 * net. Each rate's tax is summed unrounded (exactly) over the invoice and rounded once, half up, to the currency.
 * For an inclusive rate the rounded net is the gross minus the rounded tax, so a tax-inclusive total never moves.
 * Discounts are negative lines carrying the same rates, so they reduce the net before tax. The invoice-wide percent
 * of D-51 (`priceInvoice`) is the case of no named rate.
 */
import { Decimal } from 'decimal.js';
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

/**
 * Exact arithmetic for the sums below: a rate's tax is a sum of fractions (gross / (100 + an inclusive percent)),
 * added over a common denominator and divided once, so a tax that is exactly half a minor unit rounds up as it should
 * (per-line divisions would leave 0.4999... and round down). 200 digits hold every product of the few denominators.
 */
const Exact = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_UP });

/** Σ n_i / d_i, exactly up to the one final division. */
function sumOfRatios(terms: { n: Decimal; d: Decimal }[]): Decimal {
  let n = new Exact(0);
  let d = new Exact(1);
  for (const term of terms) {
    n = n.times(term.d).plus(d.times(term.n));
    d = d.times(term.d);
  }
  return money(n.dividedBy(d).toString());
}

/** One rate's lines: gross amounts summed per inclusive percent of the line ('0' for lines without one). */
interface RateSums {
  terms: TaxTerms;
  grossByInclusive: Map<string, Decimal>;
}

/** T-4: the invoice of `lines`, each with the rates that apply to it (`ratesOf[i]` for `lines[i]`). */
export function priceTaxedInvoice(lines: LineInput[], ratesOf: TaxTerms[][], currency: string): TaxedTotals {
  const priced: PricedLine[] = priceLines(lines, currency);
  const sums = new Map<string, RateSums>();
  const add = (terms: TaxTerms, inclusivePercent: string, gross: Decimal) => {
    const entry = sums.get(terms.id) ?? { terms, grossByInclusive: new Map<string, Decimal>() };
    sums.set(terms.id, entry);
    entry.grossByInclusive.set(
      inclusivePercent,
      (entry.grossByInclusive.get(inclusivePercent) ?? money(0)).plus(gross),
    );
  };
  priced.forEach((line, i) => {
    const rates = ratesOf[i] ?? [];
    const inclusivePercent = rates.find((r) => r.inclusive)?.percentage ?? '0';
    for (const rate of rates) add(rate, inclusivePercent, line.amount);
  });
  const taxes: TaxEntry[] = [...sums.values()].map(({ terms, grossByInclusive }) => {
    // Each group's net is gross x 100 / (100 + its inclusive percent); the rate's tax is the net x its percent.
    const groups = [...grossByInclusive].map(([inc, gross]) => ({ gross, d: new Exact(inc).plus(100) }));
    const tax = sumOfRatios(groups.map((g) => ({ n: new Exact(g.gross.toString()).times(terms.percentage), d: g.d })));
    const amount = roundToCurrency(tax, currency);
    const gross = sumMoney(groups.map((g) => g.gross));
    const net = sumOfRatios(groups.map((g) => ({ n: new Exact(g.gross.toString()).times(100), d: g.d })));
    return {
      taxRateId: terms.id,
      name: terms.name,
      percentage: money(terms.percentage).toString(),
      inclusive: terms.inclusive,
      // An inclusive rate's rounded net is its gross less its rounded tax, so the total never moves.
      taxableAmount: terms.inclusive ? gross.minus(amount) : roundToCurrency(net, currency),
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
  taxes: readonly (Omit<TaxEntry, 'taxableAmount' | 'amount'> & {
    taxableAmount: Decimal | string;
    amount: Decimal | string;
  })[],
  amount: Decimal | string,
  total: Decimal | string,
  currency: string,
): TaxEntry[] {
  const share = money(total).isZero() ? money(0) : money(amount).dividedBy(total);
  return taxes.map((t) => ({
    ...t,
    taxableAmount: roundToCurrency(money(t.taxableAmount).times(share), currency),
    amount: roundToCurrency(money(t.amount).times(share), currency),
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
