import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { proratedAmount, unusedSeconds } from '../../src/pricing/proration.ts';
import { amountIn, CURRENCIES, currency, fraction, integer, over, rounded, times } from './reference.ts';

const SECOND = 1000;
const from = Date.parse('2025-01-01T00:00:00Z');

/** A period of whole seconds (up to a year and a bit) and an instant in whole seconds before, in or after it. */
const periodAndInstant = fc
  .tuple(fc.integer({ min: 0, max: 400 * 86400 }), fc.integer({ min: 1, max: 400 * 86400 }))
  .chain(([offset, length]) =>
    fc.record({
      start: fc.constant(new Date(from + offset * SECOND)),
      end: fc.constant(new Date(from + (offset + length) * SECOND)),
      at: fc.integer({ min: offset - 86400, max: offset + length + 86400 }).map((s) => new Date(from + s * SECOND)),
    }),
  );

const priced = currency.chain((code) => fc.tuple(fc.constant(code), amountIn(code)));

test('proration is price x seconds left / seconds in the period, rounded half-up once', (t) => {
  fc.assert(
    fc.property(periodAndInstant, priced, ({ start, end, at }, [code, price]) => {
      const clamped = Math.min(Math.max(at.getTime(), start.getTime()), end.getTime());
      const left = (end.getTime() - clamped) / SECOND;
      const total = (end.getTime() - start.getTime()) / SECOND;
      const expected = rounded(over(times(fraction(price), integer(left)), integer(total)), CURRENCIES[code]);
      const amount = proratedAmount(price, { start, end }, at, code);
      assert.equal(amount.toFixed(CURRENCIES[code]), expected);
      assert.ok(amount.decimalPlaces() <= CURRENCIES[code]);
      assert.ok(!amount.isNegative() && amount.lte(price));
    }),
  );
  t.pass();
});

test('a full period prorates to the full price, none of it to zero, an empty period to zero', (t) => {
  fc.assert(
    fc.property(periodAndInstant, priced, ({ start, end }, [code, price]) => {
      assert.ok(proratedAmount(price, { start, end }, start, code).eq(price));
      assert.ok(proratedAmount(price, { start, end }, new Date(start.getTime() - SECOND), code).eq(price));
      assert.ok(proratedAmount(price, { start, end }, end, code).isZero());
      assert.ok(proratedAmount(price, { start: end, end }, start, code).isZero());
    }),
  );
  t.pass();
});

test('the later the change, the less is left to prorate', (t) => {
  fc.assert(
    fc.property(
      periodAndInstant,
      fc.integer({ min: 0, max: 86400 }),
      priced,
      ({ start, end, at }, later, [code, price]) => {
        const after = new Date(at.getTime() + later * SECOND);
        assert.ok(
          proratedAmount(price, { start, end }, after, code).lte(proratedAmount(price, { start, end }, at, code)),
        );
      },
    ),
  );
  t.pass();
});

test('unused seconds of a period', (t) => {
  const period = { start: new Date('2025-04-01T00:00:00Z'), end: new Date('2025-05-01T00:00:00Z') };
  t.deepEqual(unusedSeconds(period, new Date('2025-04-21T00:00:00Z')), [10 * 86400, 30 * 86400]);
  t.deepEqual(unusedSeconds(period, new Date('2025-03-01T00:00:00Z')), [30 * 86400, 30 * 86400]);
  t.deepEqual(unusedSeconds(period, new Date('2025-06-01T00:00:00Z')), [0, 30 * 86400]);
});

test('worked example: a third of the period left of 30.00 and 60.00 (D-45)', (t) => {
  const period = { start: new Date('2025-04-01T00:00:00Z'), end: new Date('2025-05-01T00:00:00Z') };
  const at = new Date('2025-04-21T00:00:00Z');
  t.is(proratedAmount('30.00', period, at, 'USD').toFixed(2), '10.00');
  t.is(proratedAmount('60.00', period, at, 'USD').toFixed(2), '20.00');
  t.is(proratedAmount('100', period, new Date('2025-04-01T07:00:00Z'), 'JPY').toFixed(0), '99');
});
