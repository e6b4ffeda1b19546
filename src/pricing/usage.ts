/**
 * Usage charges (U-4): the amount a quantity of a metric costs under a charge's model, with the tiers it fills. The
 * current-usage read (U-9), the invoice's usage lines (U-11) and their adjustments (U-12) all price through here.
 * Tier i covers quantities in (upTo(i-1), upTo(i)]; a tier's amount is exact; the charge's amount is rounded once,
 * half up, to the currency (roundToCurrency).
 */
import type { Decimal } from 'decimal.js';
import { Money, money, sumMoney } from '../money.ts';
import { type LineInput, lineAmount } from './lines.ts';
import { roundToCurrency } from './rounding.ts';

export const CHARGE_MODELS = ['per_unit', 'package', 'graduated', 'volume'] as const;
export type ChargeModel = (typeof CHARGE_MODELS)[number];

export interface Tier {
  /** The tier's upper bound, inclusive; null for the last, open tier. */
  upTo: string | null;
  unitPrice: string;
  flatFee?: string | null;
}

/** A charge's terms, as stored (the fields its model does not use are null). */
export interface ChargeTerms {
  model: ChargeModel;
  unitPrice?: string | null;
  freeUnits?: string | null;
  packageSize?: number | null;
  packagePrice?: string | null;
  tiers?: Tier[] | null;
}

/** One tier that holds units (U-9): its units, prices and exact amount. */
export interface TierAmount {
  upTo: string | null;
  units: string;
  unitPrice: string;
  flatFee: string;
  amount: string;
}

export interface UsagePrice {
  /** Rounded to the currency. */
  amount: Decimal;
  tiers: TierAmount[];
}

const ZERO = money(0);

const billable = (quantity: Decimal, freeUnits: string | null | undefined) =>
  Money.max(ZERO, quantity.minus(freeUnits ?? '0'));

function tierAmount(tier: Tier, units: Decimal): TierAmount {
  const flatFee = money(tier.flatFee ?? '0');
  return {
    upTo: tier.upTo,
    // toFixed(): plain notation however small or large (toString writes 1e-10).
    units: units.toFixed(),
    unitPrice: tier.unitPrice,
    flatFee: flatFee.toFixed(),
    amount: units.times(tier.unitPrice).plus(flatFee).toFixed(),
  };
}

/** Graduated: each tier prices the units that fall in it, plus its flat fee when it holds any. */
function graduated(tiers: Tier[], quantity: Decimal): TierAmount[] {
  const filled: TierAmount[] = [];
  let lower = ZERO;
  for (const tier of tiers) {
    if (quantity.lte(lower)) break;
    const upper = tier.upTo === null ? quantity : Money.min(quantity, tier.upTo);
    filled.push(tierAmount(tier, upper.minus(lower)));
    if (tier.upTo === null) break;
    lower = money(tier.upTo);
  }
  return filled;
}

/** Volume: the whole quantity at the one tier that holds it; nothing for a quantity of 0 (or less). */
function volume(tiers: Tier[], quantity: Decimal): TierAmount[] {
  if (quantity.lte(0)) return [];
  const tier = tiers.find((t) => t.upTo === null || quantity.lte(t.upTo)) ?? tiers[tiers.length - 1]!;
  return [tierAmount(tier, quantity)];
}

/** The amount `quantity` costs under `terms`, in `currency` (U-4). */
export function priceUsage(terms: ChargeTerms, quantity: Decimal | string, currency: string): UsagePrice {
  const q = money(quantity);
  switch (terms.model) {
    case 'per_unit':
      return {
        amount: roundToCurrency(billable(q, terms.freeUnits).times(terms.unitPrice ?? '0'), currency),
        tiers: [],
      };
    case 'package': {
      const packages = billable(q, terms.freeUnits)
        .dividedBy(terms.packageSize ?? 1)
        .toDecimalPlaces(0, Money.ROUND_CEIL);
      return { amount: roundToCurrency(packages.times(terms.packagePrice ?? '0'), currency), tiers: [] };
    }
    case 'graduated':
    case 'volume': {
      const tiers = (terms.model === 'graduated' ? graduated : volume)(terms.tiers ?? [], q);
      return { amount: roundToCurrency(sumMoney(tiers.map((t) => t.amount)), currency), tiers };
    }
  }
}

/** The words a credited part of a negative adjustment line is shown with (U-12). */
export const CARRIED_TO_CREDIT = 'To your credit balance';

/**
 * U-12: an invoice whose lines would add up below 0. Each negative line `adjustable` names (a usage adjustment) stays
 * as it is, a negative line; what the invoice cannot absorb is carried to store credit by a positive line beside the
 * adjustments, one per adjustment that gives up part of its amount (the last first), so the invoice adds up to exactly
 * 0 (lines priced as issuing prices them, lineAmount) and each carried amount is taxed as its adjustment is.
 */
export function absorbNegative(
  lines: LineInput[],
  currency: string,
  adjustable: (line: LineInput) => boolean,
): { lines: LineInput[]; credit: Decimal } {
  let excess = sumMoney(lines.map((l) => lineAmount(l, currency))).negated();
  if (!excess.gt(0)) return { lines, credit: ZERO };
  const credit = excess;
  const carried: LineInput[] = [];
  for (let i = lines.length - 1; i >= 0 && excess.gt(0); i--) {
    const line = lines[i]!;
    const amount = lineAmount(line, currency);
    if (!adjustable(line) || !amount.isNegative()) continue;
    const part = Money.min(excess, amount.negated());
    const { taxRateIds, planTaxRateIds } = line;
    const what = line.description.replace(/^Usage adjustment: /, '');
    carried.push({
      description: `${CARRIED_TO_CREDIT}: ${what}`,
      quantity: 1,
      unitPrice: part.toString(),
      ...(taxRateIds ? { taxRateIds } : {}),
      ...(planTaxRateIds ? { planTaxRateIds } : {}),
    });
    excess = excess.minus(part);
  }
  return { lines: [...lines, ...carried], credit: credit.minus(excess) };
}
