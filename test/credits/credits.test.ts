import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, readInvoice, snapshot, type Ctx } from '../payments/fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const credit = (body: Record<string, unknown>) =>
  request(c.baseUrl, '/api/billing/credits', { cookie: c.cookie, body });
const customerRead = async (id: string) =>
  (await request(c.baseUrl, `/api/customers/${id}`, { cookie: c.cookie })).body;
const ledger = async (customerId: string) =>
  (await request(c.baseUrl, `/api/billing/credits?customerId=${customerId}`, { cookie: c.cookie })).body;

test('a credit answers 201 with the D-57 shape; the customer creditBalance reflects it', async (t) => {
  const customer = await insertCustomer(app.db);
  const res = await credit({ customerId: customer.id, amount: '25.5', description: 'Goodwill' });
  t.is(res.status, 201, res.text);
  t.like(res.body, {
    customerId: customer.id,
    amount: '25.50',
    currency: 'USD',
    description: 'Goodwill',
    balanceAfter: '25.50',
    kind: 'credit',
    applications: [],
  });
  for (const key of ['id', 'customerId', 'amount', 'currency', 'description', 'balanceAfter', 'createdAt'])
    t.true(key in res.body, key);
  t.like(await customerRead(customer.id), { creditBalance: '25.50', creditBalances: { USD: '25.50' } });
  const second = await credit({ customerId: customer.id, amount: '4.50' });
  t.is(second.body.balanceAfter, '30.00');
  t.is(second.body.description, null);
  t.is((await customerRead(customer.id)).creditBalance, '30.00');
});

test('credit is applied when an invoice is issued', async (t) => {
  const customer = await insertCustomer(app.db);
  await credit({ customerId: customer.id, amount: '25.00' });
  const invoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '40.00' });
  t.like(invoice, { status: 'issued', creditApplied: '25.00', amountDue: '15.00' });
  t.is((await customerRead(customer.id)).creditBalance, '0.00');
});

test(
  'credit arriving is spent on open invoices oldest first, in their currency only; the ledger records each ' +
    'application',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const first = await makeInvoice(c, { customerId: customer.id, unitPrice: '10.00' });
    const second = await makeInvoice(c, { customerId: customer.id, unitPrice: '20.00' });
    const third = await makeInvoice(c, { customerId: customer.id, unitPrice: '30.00' });
    const draft = await makeInvoice(c, { customerId: customer.id, unitPrice: '5.00', status: 'draft' });
    const euro = await makeInvoice(c, { customerId: customer.id, unitPrice: '5.00', currency: 'EUR' });

    const res = await credit({ customerId: customer.id, amount: '25.00', description: 'Outage' });
    t.is(res.status, 201);
    t.is(res.body.balanceAfter, '0.00');
    t.deepEqual(res.body.applications, [
      { invoiceId: first.id, invoiceNumber: first.invoiceNumber, amount: '10.00' },
      { invoiceId: second.id, invoiceNumber: second.invoiceNumber, amount: '15.00' },
    ]);
    const paid = await readInvoice(c, first.id);
    t.like(paid, { status: 'paid', creditApplied: '10.00', amountDue: '0.00' });
    t.truthy(paid.paidAt);
    t.like(await readInvoice(c, second.id), { status: 'issued', creditApplied: '15.00', amountDue: '5.00' });
    t.like(await readInvoice(c, third.id), { creditApplied: '0.00', amountDue: '30.00' });
    t.like(await readInvoice(c, draft.id), { status: 'draft', creditApplied: '0.00' });
    t.like(await readInvoice(c, euro.id), { creditApplied: '0.00' });
    t.truthy(
      await app.db('events').where({ type: 'invoice.paid' }).whereRaw("data->>'invoiceId' = ?", [first.id]).first(),
    );

    t.deepEqual(
      (await ledger(customer.id)).map((e: Record<string, unknown>) => [e.kind, e.amount, e.invoiceId, e.balanceAfter]),
      [
        ['credit', '25.00', null, '25.00'],
        ['application', '-10.00', first.id, '15.00'],
        ['application', '-15.00', second.id, '0.00'],
      ],
    );
    t.like(await customerRead(customer.id), { creditBalance: '0.00' });

    // More credit than is due: the rest stays as balance.
    const more = await credit({ customerId: customer.id, amount: '100.00' });
    t.is(more.body.balanceAfter, '65.00');
    t.deepEqual(
      more.body.applications.map((a: { amount: string }) => a.amount),
      ['5.00', '30.00'],
    );
    t.is((await readInvoice(c, third.id)).status, 'paid');
  },
);

test('credit in another currency applies to invoices in that currency and shows in creditBalances', async (t) => {
  const customer = await insertCustomer(app.db);
  const euro = await makeInvoice(c, { customerId: customer.id, unitPrice: '8.00', currency: 'EUR' });
  const usd = await makeInvoice(c, { customerId: customer.id, unitPrice: '8.00' });
  const res = await credit({ customerId: customer.id, amount: '10.00', currency: 'eur' });
  t.like(res.body, { currency: 'EUR', balanceAfter: '2.00' });
  t.is((await readInvoice(c, euro.id)).status, 'paid');
  t.is((await readInvoice(c, usd.id)).amountDue, '8.00');
  t.like(await customerRead(customer.id), { creditBalance: '0.00', creditBalances: { EUR: '2.00' } });
  t.is((await credit({ customerId: customer.id, amount: '1.5', currency: 'JPY' })).status, 400);
});

test('voiding an invoice returns the credit applied to it', async (t) => {
  const customer = await insertCustomer(app.db);
  const invoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '50.00' });
  await credit({ customerId: customer.id, amount: '20.00' });
  t.is((await readInvoice(c, invoice.id)).creditApplied, '20.00');
  t.is((await customerRead(customer.id)).creditBalance, '0.00');
  const voided = await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
    method: 'PUT',
    cookie: c.cookie,
    body: { status: 'void' },
  });
  t.is(voided.body.status, 'void');
  t.is((await customerRead(customer.id)).creditBalance, '20.00');
});

test('concurrent credits, issues and voids for one customer: no deadlock, no credit spent twice', async (t) => {
  const customer = await insertCustomer(app.db);
  // The oldest two are too big for the credit to pay, so they are still voidable when the voids run.
  const voidable = [
    await makeInvoice(c, { customerId: customer.id, unitPrice: '100.00' }),
    await makeInvoice(c, { customerId: customer.id, unitPrice: '100.00' }),
  ];
  await Promise.all(Array.from({ length: 2 }, () => makeInvoice(c, { customerId: customer.id, unitPrice: '7.00' })));
  const drafts = await Promise.all(
    Array.from({ length: 4 }, () => makeInvoice(c, { customerId: customer.id, unitPrice: '3.00', status: 'draft' })),
  );
  const work = [
    ...Array.from({ length: 8 }, () => credit({ customerId: customer.id, amount: '2.00' })),
    ...drafts.map((d) =>
      request(app.baseUrl, `/api/billing/invoices/${d.id}`, {
        method: 'PUT',
        cookie: c.cookie,
        body: { status: 'issued' },
      }),
    ),
    ...voidable.map((i) =>
      request(app.baseUrl, `/api/billing/invoices/${i.id}`, {
        method: 'PUT',
        cookie: c.cookie,
        body: { status: 'void' },
      }),
    ),
  ];
  const answers = await Promise.all(work);
  t.true(
    answers.every((r) => r.status === 200 || r.status === 201),
    answers.map((r) => `${r.status} ${r.text}`).join('\n'),
  );

  const invoices = await app.db('invoices').where({ customer_id: customer.id });
  const entries = await app.db('credit_ledger').where({ customer_id: customer.id });
  // cents, test-side only
  const sum = (rows: { amount: string }[]) => rows.reduce((s, r) => s + Math.round(Number(r.amount) * 100), 0);
  const balance = sum(entries);
  t.true(balance >= 0);
  for (const invoice of invoices.filter((i) => i.status !== 'void')) {
    const applied = 0 - sum(entries.filter((e) => e.kind === 'application' && e.invoice_id === invoice.id));
    t.is(Math.round(Number(invoice.credit_applied) * 100), applied, invoice.invoice_number);
  }
  // 16.00 of credit in; what the open invoices did not take is the balance.
  const appliedToLive = invoices
    .filter((i) => i.status !== 'void')
    .reduce((s, i) => s + Math.round(Number(i.credit_applied) * 100), 0);
  t.is(balance + appliedToLive, 1600);
  t.is((await customerRead(customer.id)).creditBalance, (balance / 100).toFixed(2));
});

test('GET /api/billing/credits lists ledger entries by customer and pages', async (t) => {
  const customer = await insertCustomer(app.db);
  for (const amount of ['1.00', '2.00', '3.00']) await credit({ customerId: customer.id, amount });
  const page = await request(app.baseUrl, `/api/billing/credits?customerId=${customer.id}&limit=2`, {
    cookie: c.cookie,
  });
  t.deepEqual(
    page.body.map((e: { balanceAfter: string }) => e.balanceAfter),
    ['1.00', '3.00'],
  );
  const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')![1]!;
  const rest = await request(app.baseUrl, next, { cookie: c.cookie });
  t.deepEqual(
    rest.body.map((e: { balanceAfter: string }) => e.balanceAfter),
    ['6.00'],
  );
  t.is((await request(app.baseUrl, '/api/billing/credits?customerId=nope', { cookie: c.cookie })).status, 400);
  t.is((await request(app.baseUrl, '/api/billing/credits')).status, 401);
});

const ZERO_UUID = '00000000-0000-4000-8000-000000000000';
const refusals: [string, (customerId: string) => Record<string, unknown>, string][] = [
  ['a JSON number amount', (id) => ({ customerId: id, amount: 10 }), 'invalid_request'],
  ['an exponent amount "1.5e3"', (id) => ({ customerId: id, amount: '1.5e3' }), 'invalid_request'],
  ['a word for an amount', (id) => ({ customerId: id, amount: 'ten' }), 'invalid_request'],
  ['a zero amount', (id) => ({ customerId: id, amount: '0' }), 'invalid_request'],
  ['a negative amount', (id) => ({ customerId: id, amount: '-3.00' }), 'invalid_request'],
  ['more decimals than the currency has', (id) => ({ customerId: id, amount: '3.001' }), 'invalid_amount'],
  ['a bad currency', (id) => ({ customerId: id, amount: '3.00', currency: 'US' }), 'invalid_request'],
  ['an unknown customer', () => ({ customerId: ZERO_UUID, amount: '3.00' }), 'customer_not_found'],
  ['a malformed customer id', () => ({ customerId: 'cus_1', amount: '3.00' }), 'invalid_request'],
];
for (const [name, body, code] of refusals) {
  test.serial(`refused: ${name} -> 400 ${code}, nothing changed`, async (t) => {
    const customer = await insertCustomer(app.db);
    await makeInvoice(c, { customerId: customer.id });
    const before = await snapshot(app.db);
    const res = await credit(body(customer.id));
    t.is(res.status, 400, res.text);
    t.is(res.body.error.code, code);
    t.deepEqual(await snapshot(app.db), before);
    t.is((await customerRead(customer.id)).creditBalance, '0.00');
  });
}
