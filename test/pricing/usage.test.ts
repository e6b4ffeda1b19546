/**
 * U-4: each charge model priced exactly as a simple reference (exact fractions of BigInts, test/pricing/reference.ts)
 * for random quantities, prices and tiers, in currencies of 0 to 4 minor digits.
 */
import test from 'ava';
import fc from 'fast-check';
import { absorbNegative, priceUsage, type Tier } from '../../src/pricing/usage.ts';
import {
  amountIn,
  CURRENCIES,
  currency,
  decimal,
  type Fraction,
  fraction,
  integer,
  lessThan,
  minus,
  min,
  plus,
  rounded,
  times,
} from './reference.ts';

const ZERO = integer(0);
const positive = (f: Fraction) => lessThan(ZERO, f);
const atMost = (a: Fraction, b: Fraction) => !lessThan(b, a);
const billable = (q: Fraction, free: string) => {
  const rest = minus(q, fraction(free));
  return positive(rest) ? rest : ZERO;
};
/** ceil(a) for a >= 0. */
const ceil = (a: Fraction) => integer((a.n + a.d - 1n) / a.d);

function refGraduated(tiers: Tier[], q: Fraction): Fraction[] {
  const amounts: Fraction[] = [];
  let lower = ZERO;
  for (const tier of tiers) {
    if (atMost(q, lower)) break;
    const upper = tier.upTo === null ? q : min(q, fraction(tier.upTo));
    amounts.push(plus(times(minus(upper, lower), fraction(tier.unitPrice)), fraction(tier.flatFee ?? '0')));
    if (tier.upTo === null) break;
    lower = fraction(tier.upTo);
  }
  return amounts;
}

function refVolume(tiers: Tier[], q: Fraction): Fraction[] {
  if (!positive(q)) return [];
  const tier = tiers.find((t) => t.upTo === null || atMost(q, fraction(t.upTo)))!;
  return [plus(times(q, fraction(tier.unitPrice)), fraction(tier.flatFee ?? '0'))];
}

const sum = (fs: Fraction[]) => fs.reduce(plus, ZERO);
const quantity = decimal(4, 10n ** 6n, { negative: false });
const unitPrice = decimal(12, 10n ** 3n, { negative: false });

/** Ascending tiers, the last open: bounds are running sums of positive steps of up to 3 decimals. */
const tiers = (code: keyof typeof CURRENCIES) =>
  fc
    .array(
      fc.record({
        step: decimal(3, 10n ** 5n, { negative: false }).filter((s) => positive(fraction(s))),
        unitPrice,
        flatFee: fc.option(amountIn(code, 10n ** 3n), { nil: undefined }),
      }),
      { minLength: 1, maxLength: 5 },
    )
    .map((drawn) => {
      let bound = ZERO;
      return drawn.map((d, i): Tier => {
        bound = plus(bound, fraction(d.step));
        const upTo = i === drawn.length - 1 ? null : rounded(bound, 3);
        return { upTo, unitPrice: d.unitPrice, ...(d.flatFee ? { flatFee: d.flatFee } : {}) };
      });
    });

test('per_unit: max(0, q - free) x unitPrice, rounded once', (t) => {
  fc.assert(
    fc.property(currency, quantity, unitPrice, decimal(3, 10n ** 6n, { negative: false }), (code, q, price, free) => {
      const got = priceUsage({ model: 'per_unit', unitPrice: price, freeUnits: free }, q, code);
      const want = rounded(times(billable(fraction(q), free), fraction(price)), CURRENCIES[code]);
      return got.amount.toFixed(CURRENCIES[code]) === want && got.tiers.length === 0;
    }),
  );
  t.pass();
});

test('package: ceil(max(0, q - free) / size) x packagePrice', (t) => {
  fc.assert(
    fc.property(
      currency.chain((code) => fc.tuple(fc.constant(code), amountIn(code))),
      quantity,
      fc.integer({ min: 1, max: 100_000 }),
      decimal(3, 10n ** 5n, { negative: false }),
      ([code, price], q, size, free) => {
        const got = priceUsage({ model: 'package', packageSize: size, packagePrice: price, freeUnits: free }, q, code);
        const rest = billable(fraction(q), free);
        const packages = ceil({ n: rest.n, d: rest.d * BigInt(size) });
        return got.amount.toFixed(CURRENCIES[code]) === rounded(times(packages, fraction(price)), CURRENCIES[code]);
      },
    ),
  );
  t.pass();
});

test('U-12: a negative adjustment stays a negative line; what the invoice cannot absorb is carried to credit', (t) => {
  const lines = [
    { description: 'Base', quantity: 1, unitPrice: '10.00' },
    { description: 'Usage adjustment: A', quantity: 1, unitPrice: '-4.00', usage: { adjustment: {} } },
    { description: 'Usage adjustment: B', quantity: 1, unitPrice: '-9.50', usage: { adjustment: {} } },
  ];
  const { lines: fitted, credit } = absorbNegative(lines, 'USD', (l) => Boolean(l.usage));
  t.is(credit.toFixed(2), '3.50');
  t.deepEqual(
    fitted.map((l) => [l.description, l.unitPrice]),
    [
      ['Base', '10.00'],
      ['Usage adjustment: A', '-4.00'],
      ['Usage adjustment: B', '-9.50'],
      ['To your credit balance: B', '3.5'],
    ],
  );
  const both = absorbNegative([lines[1]!, lines[2]!], 'USD', (l) => Boolean(l.usage));
  t.is(both.credit.toFixed(2), '13.50');
  t.deepEqual(
    both.lines.slice(2).map((l) => [l.description, l.unitPrice]),
    [
      ['To your credit balance: B', '9.5'],
      ['To your credit balance: A', '4'],
    ],
  );
  t.is(absorbNegative(lines.slice(0, 2), 'USD', () => true).credit.toFixed(2), '0.00');
  t.is(absorbNegative(lines.slice(0, 2), 'USD', () => true).lines.length, 2);
});

for (const model of ['graduated', 'volume'] as const) {
  test(`${model}: the amount and each tier's exact amount match the reference`, (t) => {
    fc.assert(
      fc.property(
        currency.chain((code) => fc.tuple(fc.constant(code), tiers(code), quantity)),
        ([code, drawnTiers, q]) => {
          const got = priceUsage({ model, tiers: drawnTiers }, q, code);
          const want = (model === 'graduated' ? refGraduated : refVolume)(drawnTiers, fraction(q));
          const amountsMatch =
            got.tiers.length === want.length &&
            got.tiers.every((tier, i) => {
              const w = want[i]!;
              const g = fraction(tier.amount);
              return g.n * w.d === w.n * g.d;
            });
          const unitsAddUp =
            model === 'volume' ||
            sum(got.tiers.map((tier) => fraction(tier.units))).n * fraction(q).d ===
              fraction(q).n * sum(got.tiers.map((tier) => fraction(tier.units))).d;
          return (
            amountsMatch && unitsAddUp && got.amount.toFixed(CURRENCIES[code]) === rounded(sum(want), CURRENCIES[code])
          );
        },
      ),
    );
    t.pass();
  });
}

test('worked examples (U-4)', (t) => {
  const tiers: Tier[] = [
    { upTo: '1000', unitPrice: '0' },
    { upTo: '100000', unitPrice: '0.0015' },
    { upTo: null, unitPrice: '0.001', flatFee: '5.00' },
  ];
  t.is(priceUsage({ model: 'graduated', tiers }, '100000', 'USD').amount.toFixed(2), '148.50');
  t.is(priceUsage({ model: 'graduated', tiers }, '100001', 'USD').amount.toFixed(2), '153.50');
  t.is(priceUsage({ model: 'volume', tiers }, '100000', 'USD').amount.toFixed(2), '150.00');
  t.is(priceUsage({ model: 'volume', tiers }, '0', 'USD').amount.toFixed(2), '0.00');
  t.deepEqual(priceUsage({ model: 'volume', tiers }, '0', 'USD').tiers, []);
  t.is(
    priceUsage(
      { model: 'package', packageSize: 1000, packagePrice: '2.50', freeUnits: '500' },
      '1501',
      'USD',
    ).amount.toFixed(2),
    '5.00',
  );
  t.is(
    priceUsage(
      { model: 'package', packageSize: 1000, packagePrice: '2.50', freeUnits: '500' },
      '400',
      'USD',
    ).amount.toFixed(2),
    '0.00',
  );
  t.is(priceUsage({ model: 'per_unit', unitPrice: '0.0015' }, '3', 'USD').amount.toFixed(2), '0.00');
  t.is(priceUsage({ model: 'per_unit', unitPrice: '0.0015' }, '4', 'USD').amount.toFixed(2), '0.01');
});
