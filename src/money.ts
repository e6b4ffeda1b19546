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
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/**
 * The ISO 4217 codes of currencies (List One: national currencies and the funds codes beside them). The codes
 * that are not money one bills in (precious metals XAU..., the SDR XDR and XSU, bond units XBA..., the test and
 * "no currency" codes XTS and XXX) are left out, so an invoice or a price in them is refused like a typo (D-3).
 */
export const ISO_4217_CODES: readonly string[] = `
  AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE
  CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ
  GYD HKD HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL
  LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
  PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD
  TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL
`
  .trim()
  .split(/\s+/);

export function minorUnits(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}

/** Integer amount in the currency's minor unit, as providers take it ("12.34" USD is 1234, "1000" JPY is 1000). */
export function toMinorUnits(amount: Decimal | string, currency: string): string {
  return money(amount)
    .times(money(10).pow(minorUnits(currency)))
    .toFixed(0);
}

/** A provider's integer minor-unit amount as a decimal string (1234 USD cents is "12.34"). */
export function fromMinorUnits(amount: string | number, currency: string): string {
  return money(amount)
    .dividedBy(money(10).pow(minorUnits(currency)))
    .toFixed(minorUnits(currency));
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

/**
 * A non-negative decimal string already in its output form with `n` fraction digits (no leading zero, no exponent;
 * "-0.00" is "0.00"), by n.
 */
const OUTPUT_FORMS = [0, 1, 2, 3, 4].map((n) => new RegExp(`^(0|[1-9]\\d*)${n === 0 ? '' : `\\.\\d{${n}}`}$`));

/**
 * A non-negative decimal string with fewer fraction digits than `n` (none at all included, no leading zero, no
 * exponent), by n (0 has none).
 */
const SHORT_FORMS = [0, 1, 2, 3, 4].map((n) =>
  n === 0 ? undefined : new RegExp(`^(0|[1-9]\\d*)${n === 1 ? '' : `(\\.\\d{1,${n - 1}})?`}$`),
);

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

/**
 * An invoice line's unit price as stored: its currency's minor units at least, and every finer digit it was given
 * (a unit price may be finer than the currency, D-51; "19.995" USD shows as "19.995", "20" as "20.00"), so the
 * price the line was computed from is the price shown.
 */
export function formatUnitPrice(amount: Decimal | string, currency: string): string {
  const value = money(amount);
  return value.toFixed(Math.max(minorUnits(currency), value.decimalPlaces()));
}

/** "1234567.50" -> "1,234,567.50": grouping on the formatted string, so no number ever holds the amount. */
export function groupDigits(formatted: string): string {
  const [whole = '', fraction] = formatted.split('.');
  const sign = whole.startsWith('-') ? '-' : '';
  const digits = sign ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
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
  // Not trimmed: " 10" is refused like any other text that is not a decimal (D-3's pattern, D-91: nothing silently
  // reshaped).
  .regex(DECIMAL_PATTERN, 'must be a decimal string such as "10.00"')
  .refine((v) => v.replace(/^-/, '').replace('.', '').length <= 30, 'has too many digits');

export const nonNegativeMoneyString = moneyString.refine((v) => !v.startsWith('-'), 'must not be negative');

/** The currency of an amount sent without one (products, invoices, store credit). */
export const DEFAULT_CURRENCY = 'USD';

const CURRENCY_MESSAGE = 'must be a 3-letter ISO 4217 currency code';

/**
 * ISO 4217 alphabetic code, upper case (lower case input is accepted and upper-cased); a code no currency has is
 * refused.
 */
export const currencyCode = z
  .string()
  .transform((v) => v.toUpperCase())
  .pipe(z.enum(ISO_4217_CODES as [string, ...string[]], { error: CURRENCY_MESSAGE }));
