/**
 * formatMoney answers a decimal string already in its currency's output form as it is (issue 20: no Decimal per
 * amount of a response), one with fewer fraction digits padded with zeros; every other input is rounded as before.
 * The shortcuts must never answer differently.
 */
import test from 'ava';
import { formatMoney, minorUnits } from '../../src/money.ts';
import { roundToCurrency } from '../../src/pricing/rounding.ts';

const inputs = [
  '12.5',
  '0.5',
  '12.12',
  '1.123',
  '007.5',
  '0.',
  '1.1.1',
  '1,5',
  ' 1',
  '0',
  '-0',
  '0.00',
  '-0.00',
  '0.000',
  '10.00',
  '10.0',
  '10',
  '010.00',
  '1.005',
  '12.345',
  '-5.50',
  '-5',
  '1000',
  '1000.00',
  '1e3',
  '0.1',
  '99999999.99',
  '-0.001',
  '00',
  '5.',
  '.5',
  '0.0000',
  '12.3456',
];

test('the output form is the rounded form, for every currency scale and input shape', (t) => {
  for (const currency of ['USD', 'JPY', 'BHD', 'CLF']) {
    for (const input of inputs) {
      const expected = (() => {
        try {
          return roundToCurrency(input, currency).toFixed(minorUnits(currency));
        } catch {
          return 'refused';
        }
      })();
      const actual = (() => {
        try {
          return formatMoney(input, currency);
        } catch {
          return 'refused';
        }
      })();
      t.is(actual, expected, `${input} ${currency}`);
    }
  }
  t.is(formatMoney('49.00', 'USD'), '49.00');
  t.is(formatMoney('49', 'USD'), '49.00');
  t.is(formatMoney('-0.00', 'USD'), '0.00');
  t.is(formatMoney('1.005', 'USD'), '1.01');
});
