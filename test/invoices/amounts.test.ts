import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { line, postInvoice } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const table = [
  {
    name: '3 x 0.333 rounds the line half-up',
    lines: [line('0.333', 3)],
    rate: '0',
    currency: 'USD',
    amounts: ['1.00'],
    subtotal: '1.00',
    tax: '0.00',
    total: '1.00',
  },
  {
    name: 'half a cent rounds up',
    lines: [line('0.005', 1)],
    rate: '0',
    currency: 'USD',
    amounts: ['0.01'],
    subtotal: '0.01',
    tax: '0.00',
    total: '0.01',
  },
  {
    name: 'tax on odd cents rounds half-up',
    lines: [line('0.10', 1)],
    rate: '5',
    currency: 'USD',
    amounts: ['0.10'],
    subtotal: '0.10',
    tax: '0.01',
    total: '0.11',
  },
  {
    name: 'tax below half a cent rounds down',
    lines: [line('0.09', 1)],
    rate: '5',
    currency: 'USD',
    amounts: ['0.09'],
    subtotal: '0.09',
    tax: '0.00',
    total: '0.09',
  },
  {
    name: 'fractional rate',
    lines: [line('19.99', 3)],
    rate: '8.25',
    currency: 'USD',
    amounts: ['59.97'],
    subtotal: '59.97',
    tax: '4.95',
    total: '64.92',
  },
  {
    name: 'JPY has no minor unit',
    lines: [line('333.5', 1), line('100', 2)],
    rate: '10',
    currency: 'JPY',
    amounts: ['334', '200'],
    subtotal: '534',
    tax: '53',
    total: '587',
  },
  {
    name: 'BHD has three decimals',
    lines: [line('1.2345', 1)],
    rate: '0',
    currency: 'BHD',
    amounts: ['1.235'],
    subtotal: '1.235',
    tax: '0.000',
    total: '1.235',
  },
  {
    name: 'a discount line lowers the total',
    lines: [line('100.00', 1), line('-15.50', 1, 'Discount')],
    rate: '10',
    currency: 'USD',
    amounts: ['100.00', '-15.50'],
    subtotal: '84.50',
    tax: '8.45',
    total: '92.95',
  },
  {
    name: 'amounts beyond float precision stay exact',
    lines: [line('12345678901234.57', 3)],
    rate: '0',
    currency: 'USD',
    amounts: ['37037036703703.71'],
    subtotal: '37037036703703.71',
    tax: '0.00',
    total: '37037036703703.71',
  },
];

for (const row of table) {
  test(`HTTP: ${row.name}`, async (t) => {
    const res = await postInvoice(app.baseUrl, cookie, app.db, {
      lineItems: row.lines,
      taxRate: row.rate,
      currency: row.currency,
    });
    t.is(res.status, 201, res.text);
    t.deepEqual(
      res.body.lineItems.map((l: { amount: string }) => l.amount),
      row.amounts,
    );
    t.is(res.body.subtotal, row.subtotal);
    t.is(res.body.taxAmount, row.tax);
    t.is(res.body.total, row.total);
    t.is(res.body.amountDue, row.total);
  });
}

test.serial('the default tax rate comes from the setting billing.default_tax_rate', async (t) => {
  await app
    .db('settings')
    .insert({ key: 'billing.default_tax_rate', value: JSON.stringify('20') })
    .onConflict('key')
    .merge();
  try {
    const res = await postInvoice(app.baseUrl, cookie, app.db, { lineItems: [line('10.00')] });
    t.is(res.body.taxRate, '20');
    t.is(res.body.total, '12.00');
  } finally {
    await app.db('settings').where({ key: 'billing.default_tax_rate' }).delete();
  }
});
