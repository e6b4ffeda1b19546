import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { amountDue } from '../../src/pricing/amount-due.ts';
import { amountIn, CURRENCIES, currency, fraction, lessThan, minus, rounded, integer } from './reference.ts';

const STATUSES = ['draft', 'issued', 'paid', 'overdue', 'void'] as const;

const invoice = currency.chain((code) =>
  fc.record({
    currency: fc.constant(code),
    status: fc.constantFrom(...STATUSES),
    total: amountIn(code),
    amount_paid: fc.oneof(fc.constant('0'), amountIn(code)),
    credit_applied: fc.oneof(fc.constant('0'), amountIn(code)),
    credited_amount: fc.oneof(fc.constant('0'), amountIn(code)),
  }),
);

test('the amount due is the total less payments, credit and credit notes, never below zero; 0 if paid or void', (t) => {
  fc.assert(
    fc.property(invoice, (i) => {
      const digits = CURRENCIES[i.currency];
      const left = minus(
        minus(minus(fraction(i.total), fraction(i.amount_paid)), fraction(i.credit_applied)),
        fraction(i.credited_amount),
      );
      const expected = i.status === 'paid' || i.status === 'void' || lessThan(left, integer(0)) ? integer(0) : left;
      assert.equal(amountDue(i).toFixed(digits), rounded(expected, digits));
    }),
  );
  t.pass();
});

test('an open invoice nothing was paid, applied or credited on owes its total', (t) => {
  fc.assert(
    fc.property(invoice, (i) => {
      const untouched = { ...i, amount_paid: '0', credit_applied: '0', credited_amount: '0' };
      const open = i.status !== 'paid' && i.status !== 'void';
      assert.ok(amountDue(untouched).eq(open ? i.total : '0'));
    }),
  );
  t.pass();
});
