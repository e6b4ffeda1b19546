/**
 * A simple reference for src/pricing: exact fractions of BigInts, rounded half away from zero, with nothing shared
 * with decimal.js, so a property compares two independent computations. Also the fast-check arbitraries the pricing
 * tests draw amounts from.
 */
import fc from 'fast-check';

/** n / d, d > 0. */
export interface Fraction {
  n: bigint;
  d: bigint;
}

const TEN = 10n;

/** A decimal string ("-12.345") as an exact fraction. */
export function fraction(value: string): Fraction {
  const negative = value.startsWith('-');
  const [whole = '0', fractional = ''] = value.replace(/^-/, '').split('.');
  const n = BigInt(whole + fractional) * (negative ? -1n : 1n);
  return { n, d: TEN ** BigInt(fractional.length) };
}

export const times = (a: Fraction, b: Fraction): Fraction => ({ n: a.n * b.n, d: a.d * b.d });
export const over = (a: Fraction, b: Fraction): Fraction =>
  b.n < 0n ? { n: -a.n * b.d, d: a.d * -b.n } : { n: a.n * b.d, d: a.d * b.n };
export const plus = (a: Fraction, b: Fraction): Fraction => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });
export const minus = (a: Fraction, b: Fraction): Fraction => plus(a, { n: -b.n, d: b.d });
export const lessThan = (a: Fraction, b: Fraction): boolean => a.n * b.d < b.n * a.d;
export const min = (a: Fraction, b: Fraction): Fraction => (lessThan(b, a) ? b : a);
export const integer = (n: number | bigint): Fraction => ({ n: BigInt(n), d: 1n });

/** `value` rounded half away from zero to `digits` fraction digits, as a decimal string with exactly that many. */
export function rounded(value: Fraction, digits: number): string {
  const scale = TEN ** BigInt(digits);
  const n = value.n < 0n ? -value.n : value.n;
  // floor((2 n scale + d) / 2d): the nearest integer, a tie going up (away from zero for the magnitude).
  const units = (2n * n * scale + value.d) / (2n * value.d);
  const sign = value.n < 0n && units > 0n ? '-' : '';
  const text = units.toString().padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** The currencies the properties run in, with their minor units: 0, 2, 3 and 4 digits. */
export const CURRENCIES = { JPY: 0, USD: 2, BHD: 3, CLF: 4 } as const;
export const currency = fc.constantFrom(...(Object.keys(CURRENCIES) as (keyof typeof CURRENCIES)[]));

/**
 * A decimal string with at most `maxDigits` fraction digits, between -`bound` and `bound` (whole units). Half of them
 * end in 5, so that ties, where rounding rules differ, are common.
 */
export function decimal(maxDigits: number, bound = 10n ** 12n, { negative = true } = {}): fc.Arbitrary<string> {
  return fc.integer({ min: 0, max: maxDigits }).chain((digits) => {
    const limit = bound * TEN ** BigInt(digits);
    const units = fc.tuple(fc.bigInt({ min: negative ? -limit : 0n, max: limit }), fc.boolean());
    return units.map(([n, tie]) => {
      const tied = tie && digits > 0 ? n - (n % TEN) + (n < 0n ? -5n : 5n) : n;
      return rounded({ n: tied, d: TEN ** BigInt(digits) }, digits);
    });
  });
}

/** An amount already in `code`'s minor units (a plan's price, a stored total), not negative. */
export const amountIn = (code: keyof typeof CURRENCIES, bound = 10n ** 9n) =>
  fc
    .bigInt({ min: 0n, max: bound * TEN ** BigInt(CURRENCIES[code]) })
    .map((units) => rounded({ n: units, d: TEN ** BigInt(CURRENCIES[code]) }, CURRENCIES[code]));
