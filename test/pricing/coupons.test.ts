import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { type CouponTerms, couponApplies, discountFor } from '../../src/pricing/coupons.ts';
import { periodLines } from '../../src/pricing/plan-lines.ts';
import { priceInvoice } from '../../src/pricing/totals.ts';
import { amountIn, CURRENCIES, currency, decimal, fraction, integer, min, over, rounded, times } from './reference.ts';

/** A coupon as D-46 admits it: percentOff in (0, 100] or an amountOff; once, repeating for n cycles, or forever. */
const coupon: fc.Arbitrary<CouponTerms & { code: string }> = fc.record({
  code: fc.constant('SAVE'),
  percent_off: fc.option(
    decimal(2, 100n, { negative: false }).filter((p) => fraction(p).n > 0n),
    { nil: null },
  ),
  amount_off: decimal(4, 10n ** 6n, { negative: false }),
  duration: fc.constantFrom('once' as const, 'repeating' as const, 'forever' as const),
  duration_in_cycles: fc.option(fc.integer({ min: 1, max: 24 }), { nil: null }),
});

const plan = (price: string, code: string) => ({
  name: 'Pro',
  billing_cycle: 'monthly',
  base_price: price,
  currency: code,
});
const period = { start: new Date('2025-03-01T00:00:00Z'), end: new Date('2025-04-01T00:00:00Z') };

test('a discount is percentOff of the price or amountOff, at most the price, rounded half-up once', (t) => {
  fc.assert(
    fc.property(
      currency.chain((code) => fc.tuple(fc.constant(code), amountIn(code), coupon)),
      ([code, price, c]) => {
        const base = fraction(price);
        const raw =
          c.percent_off !== null
            ? over(times(base, fraction(c.percent_off)), integer(100))
            : fraction(c.amount_off ?? '0');
        const discount = discountFor(c, price, code);
        assert.equal(discount.toFixed(CURRENCIES[code]), rounded(min(raw, base), CURRENCIES[code]));
        assert.ok(!discount.isNegative() && discount.lte(price), discount.toString());
      },
    ),
  );
  t.pass();
});

test("a discount never makes a period's total negative, whatever the coupon, price and tax", (t) => {
  fc.assert(
    fc.property(
      currency.chain((code) =>
        fc.tuple(fc.constant(code), amountIn(code), coupon, decimal(4, 100n, { negative: false })),
      ),
      fc.integer({ min: 0, max: 30 }),
      ([code, price, c, rate], cyclesUsed) => {
        const { lines, usesCoupon } = periodLines(plan(price, code), c, cyclesUsed, period);
        const totals = priceInvoice(lines, rate, code);
        assert.ok(!totals.total.isNegative(), totals.total.toString());
        assert.equal(usesCoupon, couponApplies(c, cyclesUsed));
        assert.ok(lines.length <= (usesCoupon ? 2 : 1));
      },
    ),
  );
  t.pass();
});

test('a coupon lasts once, for its cycles, or forever', (t) => {
  const terms = (duration: CouponTerms['duration'], cycles: number | null = null): CouponTerms => ({
    percent_off: '10',
    amount_off: null,
    duration,
    duration_in_cycles: cycles,
  });
  t.deepEqual(
    [0, 1, 2].map((used) => couponApplies(terms('once'), used)),
    [true, false, false],
  );
  t.deepEqual(
    [0, 1, 2, 3].map((used) => couponApplies(terms('repeating', 2), used)),
    [true, true, false, false],
  );
  t.true(couponApplies(terms('forever'), 1000));
});

test("worked examples: a period's lines with a percent and an amount coupon", (t) => {
  const percent = {
    code: 'TEN',
    percent_off: '10',
    amount_off: null,
    duration: 'forever' as const,
    duration_in_cycles: null,
  };
  t.deepEqual(periodLines(plan('49.99', 'USD'), percent, 0, period), {
    lines: [
      { description: 'Pro (monthly) 2025-03-01 to 2025-04-01', quantity: 1, unitPrice: '49.99' },
      { description: 'Discount (TEN)', quantity: 1, unitPrice: '-5' },
    ],
    usesCoupon: true,
  });
  const capped = { ...percent, code: 'BIG', percent_off: null, amount_off: '80.00' };
  const { lines } = periodLines(plan('49.99', 'USD'), capped, 0, period);
  t.is(lines[1]?.unitPrice, '-49.99');
  t.is(priceInvoice(lines, '0', 'USD').total.toFixed(2), '0.00');
});
