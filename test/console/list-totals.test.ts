/**
 * C-15: a money list's count and sums are those of its filtered rows, per currency, and they never read more than
 * the cap (db/capped.ts): past it the list says how to narrow it (the unfiltered 100k-invoice book of
 * bench/console.ts spent 40-180 ms a view summing every invoice before).
 */
import test from 'ava';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { changeInvoiceStatus, invoiceTotals, listInvoiceSummaries } from '../../src/invoices/service.ts';
import { amountDue } from '../../src/pricing/amount-due.ts';
import { formatMoney, sumMoney } from '../../src/money.ts';
import { listPayments, paymentTotals } from '../../src/payments/service.ts';
import { type ListTotals, Totals, listTotals } from '../../src/console/pages/list-helpers.tsx';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { customer, invoiceFor, payManually } from './invoices-fixtures.ts';

let database: TestDatabase;
test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => database?.drop());
const db = () => database.knex;

/** What the list's rows add up to, per currency, summed here from every row the list shows. */
async function sumsOfListedInvoices(filters: { customerId: string; status?: string }) {
  const { rows } = await listInvoiceSummaries(db(), { limit: 100 }, filters);
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  return currencies.map((currency) => {
    const mine = rows.filter((r) => r.currency === currency);
    return {
      currency,
      count: mine.length,
      total: formatMoney(sumMoney(mine.map((r) => r.total)), currency),
      amountDue: formatMoney(sumMoney(mine.map((r) => amountDue(r))), currency),
    };
  });
}

test('the invoice totals are the sums of the filtered rows, per currency, whatever their status', async (t) => {
  const c = await customer(db(), 'Totals Mixed Book');
  const paid = await invoiceFor(db(), c.id, { unitPrice: '40.00' });
  await payManually(db(), paid.id, '40.00');
  const partly = await invoiceFor(db(), c.id, { unitPrice: '25.10' });
  await payManually(db(), partly.id, '5.05');
  const voided = await invoiceFor(db(), c.id, { unitPrice: '7.00', currency: 'EUR' });
  await changeInvoiceStatus(db(), voided.id, 'void', SYSTEM_ACTOR);
  await invoiceFor(db(), c.id, { unitPrice: '19.99', currency: 'EUR' });
  await invoiceFor(db(), c.id, { unitPrice: '3.00', status: 'draft' });
  for (const filters of [{ customerId: c.id }, { customerId: c.id, status: 'issued' }]) {
    const expected = await sumsOfListedInvoices(filters);
    t.deepEqual(await invoiceTotals(db(), filters, 100), expected, JSON.stringify(filters));
  }
  t.deepEqual(await invoiceTotals(db(), { customerId: c.id }, 100), [
    { currency: 'EUR', count: 2, total: '26.99', amountDue: '19.99' },
    // The draft's 3.00 is due as its row's column says (pricing/amount-due.ts): before, the totals left it out.
    { currency: 'USD', count: 3, total: '68.10', amountDue: '23.05' },
  ]);
});

test('past the cap the totals are not given (undefined); at the cap they are, exactly', async (t) => {
  const c = await customer(db(), 'Totals Cap Book');
  for (const price of ['1.00', '2.00', '3.00'])
    await payManually(db(), (await invoiceFor(db(), c.id, { unitPrice: price })).id, price);
  t.is(await invoiceTotals(db(), { customerId: c.id }, 2), undefined);
  t.deepEqual(await invoiceTotals(db(), { customerId: c.id }, 3), [
    { currency: 'USD', count: 3, total: '6.00', amountDue: '0.00' },
  ]);
  t.is(await paymentTotals(db(), { customerId: c.id }, 2), undefined);
  const { rows } = await listPayments(db(), { limit: 10 }, { customerId: c.id });
  t.is(rows.length, 3);
  t.deepEqual(await paymentTotals(db(), { customerId: c.id }, 3), [
    { currency: 'USD', count: 3, amount: '6.00', refunded: '0.00' },
  ]);
});

test('the totals are read for every list, the unfiltered one too, up to the cap', async (t) => {
  const asked: number[] = [];
  const read = async (cap: number) => {
    asked.push(cap);
    return [];
  };
  t.deepEqual(await listTotals(read), []);
  t.deepEqual(asked, [10_000]);
  t.is(await listTotals(async () => undefined), 'over cap');
});

test('the totals line: each currency, or past the cap how to narrow it', (t) => {
  type Row = { currency: string; count: number; total: string };
  const line = (totals: ListTotals<Row>) =>
    render(h(Totals<Row>, { totals, noun: ['invoice', 'invoices'], sums: (r) => [['total', r.total]] }));
  t.regex(line('over cap'), /More than 10,000 invoices match: narrow the list by status, customer or dates/);
  t.regex(line([{ currency: 'EUR', count: 1, total: '9.50' }]), /<strong>1 invoice<\/strong> · total 9.50 EUR/);
});
