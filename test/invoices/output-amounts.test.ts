/**
 * formatMoney answers a decimal string already in its currency's output form as it is (issue 20: no Decimal per
 * amount of a response), one with fewer fraction digits padded with zeros; every other input is rounded as before.
 * The shortcuts must never answer differently.
 */
import test from 'ava';
import { formattedAmountDue, amountDue } from '../../src/invoices/amounts.ts';
import type { InvoiceStatus } from '../../src/invoices/repo.ts';
import { formatMoney, minorUnits, roundToCurrency } from '../../src/money.ts';

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

test(
  'the amount due of an invoice nothing was paid, ' + 'applied or credited on is its total, as amountDue answers',
  (t) => {
    const amounts = ['0', '0.00', '0.0', '10', '10.5', '10.555', '-1', '-0', '3.2', '00.0', '0.01'];
    let compared = 0;
    for (const currency of ['USD', 'JPY', 'BHD']) {
      for (const status of ['draft', 'issued', 'paid', 'overdue', 'void'] as InvoiceStatus[]) {
        for (const total of ['0', '12.34', '12', '-5', '-0.00', '1.005']) {
          for (const deduction of amounts) {
            for (const at of ['amount_paid', 'credit_applied', 'credited_amount'] as const) {
              const invoice = {
                status,
                total,
                currency,
                amount_paid: '0',
                credit_applied: '0',
                credited_amount: '0',
                [at]: deduction,
              };
              t.is(formattedAmountDue(invoice), formatMoney(amountDue(invoice), currency), JSON.stringify(invoice));
              compared += 1;
            }
          }
        }
      }
    }
    t.is(compared, 3 * 5 * 6 * 11 * 3);
  },
);
