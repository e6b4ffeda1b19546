import { Decimal } from 'decimal.js';
import { z } from 'zod';

/**
 * The only place amounts are parsed, added, multiplied and rounded (D-3).
 * Amounts travel as decimal strings; arithmetic happens on Decimal; a JS number never holds money.
 */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

export const DECIMAL_PATTERN = /^-?\d+(\.\d+)?$/;

// ISO 4217 currencies whose minor unit is not 2 digits; every other code has 2.
const MINOR_UNITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

export function minorUnits(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}

/** Integer amount in the currency's minor unit, as providers take it ("12.34" USD is 1234, "1000" JPY is 1000). */
export function toMinorUnits(amount: Decimal | string, currency: string): string {
  return money(amount).times(money(10).pow(minorUnits(currency))).toFixed(0);
}

/** A provider's integer minor-unit amount as a decimal string (1234 USD cents is "12.34"). */
export function fromMinorUnits(amount: string | number, currency: string): string {
  return money(amount).dividedBy(money(10).pow(minorUnits(currency))).toFixed(minorUnits(currency));
}

export function money(value: string | number | Decimal): Decimal {
  return new Money(value);
}

/** Rounds half-up to the currency's minor unit. */
export function roundToCurrency(amount: Decimal | string, currency: string): Decimal {
  return roundHalfUp(amount, minorUnits(currency));
}

/** Money's one rounding rule: half-up to `digits` fraction digits. */
function roundHalfUp(amount: Decimal | string, digits: number): Decimal {
  return money(amount).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP);
}

/** A non-negative decimal string already in its output form with `n` fraction digits (no leading zero, no exponent; "-0.00" is "0.00"), by n. */
const OUTPUT_FORMS = [0, 1, 2, 3, 4].map((n) => new RegExp(`^(0|[1-9]\\d*)${n === 0 ? '' : `\\.\\d{${n}}`}$`));

/** A non-negative decimal string with fewer fraction digits than `n` (none at all included, no leading zero, no exponent), by n (0 has none). */
const SHORT_FORMS = [0, 1, 2, 3, 4].map((n) => (n === 0 ? undefined : new RegExp(`^(0|[1-9]\\d*)${n === 1 ? '' : `(\\.\\d{1,${n - 1}})?`}$`)));

/** A SHORT_FORMS string with zeros added up to `n` fraction digits. */
function padFraction(amount: string, n: number): string {
  const dot = amount.indexOf('.');
  return dot < 0 ? `${amount}.${'0'.repeat(n)}` : amount + '0'.repeat(n - (amount.length - dot - 1));
}

/** The output form of an amount: normalised to the currency's minor units ("10.00", "1000", "1.000"). */
export function formatMoney(amount: Decimal | string, currency: string): string {
  return formatDecimal(amount, minorUnits(currency));
}

/** A decimal with `digits` (0..4) fraction digits, rounded half-up: money's output form, and a rate's ("0.0200"). */
export function formatDecimal(amount: Decimal | string, digits: number): string {
  // What PostgreSQL answers for a NUMERIC of that scale is already its output form (issue 20: a Decimal per
  // amount was a measurable share of a response).
  if (typeof amount === 'string') {
    if (OUTPUT_FORMS[digits]?.test(amount)) return amount;
    // Fewer fraction digits ("0", "49", "12.5": a default or an amount JS priced) need no rounding.
    if (SHORT_FORMS[digits]?.test(amount)) return padFraction(amount, digits);
  }
  return roundHalfUp(amount, digits).toFixed(digits);
}

export function sumMoney(amounts: Iterable<Decimal | string>): Decimal {
  let total = money(0);
  for (const a of amounts) total = total.plus(a);
  return total;
}

/** A money field in a request: a decimal string; a JSON number is refused with a message that says why. */
export const moneyString = z
  .string({
    error: (issue) =>
      typeof issue.input === 'number'
        ? 'must be a decimal string such as "10.00", not a JSON number'
        : 'must be a decimal string such as "10.00"',
  })
  .trim()
  .regex(DECIMAL_PATTERN, 'must be a decimal string such as "10.00"')
  .refine((v) => v.replace(/^-/, '').replace('.', '').length <= 30, 'has too many digits');

export const nonNegativeMoneyString = moneyString.refine((v) => !v.startsWith('-'), 'must not be negative');

/** The currency of an amount sent without one (products, invoices, store credit). */
export const DEFAULT_CURRENCY = 'USD';

/** ISO 4217 alphabetic code, upper case (lower case input is accepted and upper-cased). */
export const currencyCode = z
  .string()
  .trim()
  .transform((v) => v.toUpperCase())
  .pipe(z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 currency code'));
