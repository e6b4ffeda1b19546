import test from 'ava';
import fc from 'fast-check';
import { minorUnits } from '../../src/money.ts';
import { roundToCurrency } from '../../src/pricing/rounding.ts';
import { CURRENCIES, currency, decimal, fraction, rounded } from './reference.ts';

test('roundToCurrency rounds half away from zero to the currency minor units, as the reference does', (t) => {
  fc.assert(
    fc.property(decimal(8), currency, (amount, code) => {
      const result = roundToCurrency(amount, code);
      return (
        result.decimalPlaces() <= minorUnits(code) &&
        result.toFixed(CURRENCIES[code]) === rounded(fraction(amount), CURRENCIES[code])
      );
    }),
  );
  t.pass();
});

test('worked examples: ties go away from zero, each currency has its own minor unit', (t) => {
  t.is(roundToCurrency('1.005', 'USD').toFixed(2), '1.01');
  t.is(roundToCurrency('1.0049', 'USD').toFixed(2), '1.00');
  t.is(roundToCurrency('-0.005', 'USD').toFixed(2), '-0.01');
  t.is(roundToCurrency('333.5', 'JPY').toFixed(0), '334');
  t.is(roundToCurrency('1.2345', 'BHD').toFixed(3), '1.235');
  t.is(roundToCurrency('0.00005', 'CLF').toFixed(4), '0.0001');
});
