import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { minorUnits } from '../../src/money.ts';
import { lineAmount } from '../../src/pricing/lines.ts';
import { priceInvoice, taxAt } from '../../src/pricing/totals.ts';
import { CURRENCIES, currency, decimal, fraction, integer, plus, rounded, times, over } from './reference.ts';

/** A line as an admin may send it: a whole quantity, a unit price of up to 12 decimals (D-91), negative or not. */
const line = fc.record({
  description: fc.constant('line'),
  quantity: fc.integer({ min: 1, max: 1_000_000 }),
  unitPrice: decimal(12, 10n ** 9n),
});
/** A tax rate percent as the setting and the body take it. */
const rate = decimal(4, 100n, { negative: false });

test('a line amount is quantity x unit price rounded half-up once, in the currency minor units', (t) => {
  fc.assert(
    fc.property(line, currency, (l, code) => {
      const amount = lineAmount(l, code);
      const expected = rounded(times(integer(l.quantity), fraction(l.unitPrice)), CURRENCIES[code]);
      return amount.decimalPlaces() <= minorUnits(code) && amount.toFixed(CURRENCIES[code]) === expected;
    }),
  );
  t.pass();
});

test('subtotal is the sum of the line amounts, tax the subtotal x rate rounded once, total their sum', (t) => {
  fc.assert(
    fc.property(fc.array(line, { maxLength: 8 }), rate, currency, (lines, percent, code) => {
      const digits = CURRENCIES[code];
      const totals = priceInvoice(lines, percent, code);
      const amounts = lines.map((l) => rounded(times(integer(l.quantity), fraction(l.unitPrice)), digits));
      const subtotal = amounts.reduce((sum, a) => plus(sum, fraction(a)), integer(0));
      const tax = rounded(over(times(subtotal, fraction(percent)), integer(100)), digits);
      const total = plus(subtotal, fraction(tax));
      assert.deepEqual(
        totals.lines.map((l) => l.amount.toFixed(digits)),
        amounts,
      );
      assert.equal(totals.subtotal.toFixed(digits), rounded(subtotal, digits));
      assert.equal(totals.taxAmount.toFixed(digits), tax);
      assert.equal(totals.total.toFixed(digits), rounded(total, digits));
      for (const amount of [totals.subtotal, totals.taxAmount, totals.total])
        assert.ok(amount.decimalPlaces() <= digits, amount.toString());
    }),
  );
  t.pass();
});

test('tax on a subtotal of zero is zero, and at 0% it is zero', (t) => {
  fc.assert(
    fc.property(rate, currency, decimal(4), (percent, code, subtotal) => {
      return taxAt('0', percent, code).isZero() && taxAt(subtotal, '0', code).isZero();
    }),
  );
  t.pass();
});

test('priceInvoice never goes through a float', (t) => {
  const line = (unitPrice: string) => ({ description: 'x', quantity: 1, unitPrice });
  const { total } = priceInvoice([line('0.1'), line('0.2')], '0', 'USD');
  t.is(total.toFixed(2), '0.30');
  t.is(total.toString(), '0.3');
});
