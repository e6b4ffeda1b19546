import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { line, postInvoice } from './fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

test('create answers 201 with the invoice shape; draft by default; USD by default', async (t) => {
  const res = await postInvoice(app.baseUrl, cookie, app.db, { lineItems: [line('12.50', 2, 'Seats')] });
  t.is(res.status, 201);
  t.like(res.body, {
    status: 'draft',
    currency: 'USD',
    subtotal: '25.00',
    taxAmount: '0.00',
    total: '25.00',
    amountPaid: '0.00',
    creditApplied: '0.00',
    amountDue: '25.00',
    paidAt: null,
    subscriptionId: null,
  });
  t.deepEqual(res.body.lineItems, [
    { description: 'Seats', quantity: 2, unitPrice: '12.50', amount: '25.00', taxRateIds: [] },
  ]);
  t.deepEqual(res.body.taxes, []);
  t.is(res.body.pdfUrl, `/api/billing/invoices/${res.body.id}/pdf`);
  t.regex(res.body.createdAt, /Z$/);
  const read = await request(app.baseUrl, `/api/billing/invoices/${res.body.id}`, { cookie });
  t.deepEqual(read.body, res.body);
});

test('invoice.created is recorded with the D-74 payload', async (t) => {
  const res = await postInvoice(app.baseUrl, cookie, app.db, { status: 'issued' });
  const event = await app
    .db('events')
    .where({ type: 'invoice.created' })
    .whereRaw("data->>'invoiceId' = ?", [res.body.id])
    .first();
  t.truthy(event);
  t.deepEqual(
    Object.keys(event.data).sort(),
    [
      'amount',
      'amountDue',
      'currency',
      'customerId',
      'dueDate',
      'invoiceId',
      'invoiceNumber',
      'status',
      'subscriptionId',
    ].sort(),
  );
  t.is(event.data.amount, '10.00');
  t.is(event.data.invoiceNumber, res.body.invoiceNumber);
});

test('lists filter by status and customer and page', async (t) => {
  const customer = await insertCustomer(app.db);
  for (const status of ['draft', 'issued', 'issued'])
    await postInvoice(app.baseUrl, cookie, app.db, { customerId: customer.id, status });
  const issued = await request(app.baseUrl, `/api/billing/invoices?customerId=${customer.id}&status=issued`, {
    cookie,
  });
  t.is(issued.body.length, 2);
  t.true(
    issued.body.every(
      (i: { status: string; customerId: string }) => i.status === 'issued' && i.customerId === customer.id,
    ),
  );
  const page = await request(app.baseUrl, `/api/billing/invoices?customerId=${customer.id}&limit=2`, { cookie });
  t.is(page.body.length, 2);
  t.regex(page.headers.get('link') ?? '', /rel="next"/);
  t.is((await request(app.baseUrl, '/api/billing/invoices?status=bogus', { cookie })).status, 400);
  t.is((await request(app.baseUrl, '/api/billing/invoices?customerId=nope', { cookie })).status, 400);
});

test('store credit is applied when an invoice is issued and returned when it is voided', async (t) => {
  const customer = await insertCustomer(app.db);
  await app
    .db('credit_ledger')
    .insert({ customer_id: customer.id, currency: 'USD', amount: '4.00', kind: 'credit', description: 'goodwill' });
  const res = await postInvoice(app.baseUrl, cookie, app.db, { customerId: customer.id, status: 'issued' });
  t.is(res.body.creditApplied, '4.00');
  t.is(res.body.amountDue, '6.00');
  const customerRead = await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie });
  t.is(customerRead.body.creditBalance, '0.00');
  await request(app.baseUrl, `/api/billing/invoices/${res.body.id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'void' },
  });
  t.is((await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie })).body.creditBalance, '4.00');
});

test('credit covering the whole invoice makes it paid at issue', async (t) => {
  const customer = await insertCustomer(app.db);
  await app.db('credit_ledger').insert({ customer_id: customer.id, currency: 'USD', amount: '50.00', kind: 'credit' });
  const res = await postInvoice(app.baseUrl, cookie, app.db, { customerId: customer.id, status: 'issued' });
  t.is(res.body.status, 'paid');
  t.truthy(res.body.paidAt);
  t.is(res.body.creditApplied, '10.00');
  t.is((await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie })).body.creditBalance, '40.00');
  t.truthy(
    await app.db('events').where({ type: 'invoice.paid' }).whereRaw("data->>'invoiceId' = ?", [res.body.id]).first(),
  );
});

test('credit in another currency is not applied', async (t) => {
  const customer = await insertCustomer(app.db);
  await app.db('credit_ledger').insert({ customer_id: customer.id, currency: 'EUR', amount: '50.00', kind: 'credit' });
  const res = await postInvoice(app.baseUrl, cookie, app.db, { customerId: customer.id, status: 'issued' });
  t.is(res.body.creditApplied, '0.00');
  t.is(res.body.status, 'issued');
});

const badBodies: [string, Record<string, unknown>, string][] = [
  ['no line items', { lineItems: [] }, 'lineItems'],
  ['quantity 0', { lineItems: [line('1.00', 0)] }, 'lineItems.0.quantity'],
  ['quantity 1.5', { lineItems: [line('1.00', 1.5)] }, 'lineItems.0.quantity'],
  [
    'a JSON number unitPrice',
    { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1.5 }] },
    'lineItems.0.unitPrice',
  ],
  ['an exponent unitPrice', { lineItems: [line('1e3')] }, 'lineItems.0.unitPrice'],
  ['a missing description', { lineItems: [{ quantity: 1, unitPrice: '1.00' }] }, 'lineItems.0.description'],
  ['a negative total', { lineItems: [line('5.00'), line('-6.00')] }, 'lineItems'],
  ['a bad currency', { currency: 'US' }, 'currency'],
  ['a bad tax rate', { taxRate: '150' }, 'taxRate'],
  ['a numeric tax rate', { taxRate: 5 }, 'taxRate'],
  ['a bad due date', { dueDate: 'tomorrow' }, 'dueDate'],
  ['a bad status', { status: 'paid' }, 'status'],
];

for (const [name, body, path] of badBodies) {
  test(`${name} is a 400 naming ${path}, and nothing is created`, async (t) => {
    const customer = await insertCustomer(app.db);
    const res = await postInvoice(app.baseUrl, cookie, app.db, { customerId: customer.id, ...body });
    t.is(res.status, 400, res.text);
    t.true(
      res.body.error.details.some((d: { path: string }) => d.path === path),
      JSON.stringify(res.body.error.details),
    );
    t.is(Number((await app.db('invoices').where({ customer_id: customer.id }).count('* as n').first())?.n), 0);
    t.is(
      Number((await app.db('events').whereRaw("data->>'customerId' = ?", [customer.id]).count('* as n').first())?.n),
      0,
    );
  });
}

test('a JSON number for money says to send a string', async (t) => {
  const res = await postInvoice(app.baseUrl, cookie, app.db, {
    lineItems: [{ description: 'x', quantity: 1, unitPrice: 10 }],
  });
  t.regex(res.body.error.details[0].message, /string/);
});

test('an unknown customer is 400 customer_not_found', async (t) => {
  const res = await request(app.baseUrl, '/api/billing/invoices', {
    cookie,
    body: { customerId: '00000000-0000-4000-8000-000000000000', lineItems: [line('1.00')] },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'customer_not_found');
});

test('invoices need an admin session', async (t) => {
  t.is((await request(app.baseUrl, '/api/billing/invoices')).status, 401);
  t.is((await request(app.baseUrl, '/api/billing/invoices', { body: {} })).status, 401);
});

// A creation answers the row as it sent it, with only the number, the stored tax rate, updated_at and the lines' ids
// read back (issue 20): the answer must be the stored invoice, for inputs PostgreSQL normalises and for every path.
test(
  'the created answer is the stored invoice (odd tax rates and prices, ' + 'a due date, store credit spent)',
  async (t) => {
    const credited = await insertCustomer(app.db);
    t.is(
      (await request(app.baseUrl, '/api/billing/credits', { cookie, body: { customerId: credited.id, amount: '3.5' } }))
        .status,
      201,
    );
    const bodies: Record<string, unknown>[] = [
      // One statement (a draft naming its tax rate), PostgreSQL normalising the tax rate; prices not in output form.
      {
        taxRate: '08.250',
        dueDate: '2026-03-01',
        lineItems: [line('049.5', 3, 'Seats "quoted" \'and\' \\ ?'), line('0.10', 7), line('1000000', 1)],
      },
      { taxRate: '0', currency: 'JPY', lineItems: [line('1000', 2)] },
      // The tax rate from settings (a read first), issued with a due date of its own.
      { status: 'issued', lineItems: [line('19.99', 2)] },
      // Issued to a customer with a balance: the credit is spent by a statement after the number.
      { status: 'issued', taxRate: '10', customerId: credited.id, lineItems: [line('5', 1), line('2.25', 2)] },
    ];
    for (const body of bodies) {
      const res = await postInvoice(app.baseUrl, cookie, app.db, body);
      t.is(res.status, 201, res.text);
      const read = await request(app.baseUrl, `/api/billing/invoices/${res.body.id}`, { cookie });
      t.deepEqual(res.body, read.body, JSON.stringify(body));
    }
    const stored = await app.db('invoices').where({ customer_id: credited.id }).first();
    t.is(stored.credit_applied, '3.5');
  },
);

test(
  "an invoice naming another customer's subscription, or one in another currency than its plan's, is refused; " +
    'nothing created',
  async (t) => {
    const owner = await insertCustomer(app.db);
    const other = await insertCustomer(app.db);
    const plan = await makePlan(app.db, '20.00', 'monthly', 'EUR');
    const sub = await request(app.baseUrl, '/api/billing/subscriptions', {
      cookie,
      body: { customerId: owner.id, planId: plan.id, billingCycle: 'monthly' },
    });
    t.is(sub.status, 201);
    const invoicesOf = async () =>
      Number((await app.db('invoices').whereIn('customer_id', [owner.id, other.id]).count({ n: '*' }).first())!.n);
    const before = await invoicesOf();
    const foreign = await postInvoice(app.baseUrl, cookie, app.db, {
      customerId: other.id,
      subscriptionId: sub.body.id,
      currency: 'EUR',
    });
    t.is(foreign.status, 400);
    t.deepEqual(foreign.body.error.details, [
      { path: 'subscriptionId', message: "is another customer's subscription" },
    ]);
    const currency = await postInvoice(app.baseUrl, cookie, app.db, {
      customerId: owner.id,
      subscriptionId: sub.body.id,
    });
    t.is(currency.status, 400);
    t.deepEqual(currency.body.error.details, [
      { path: 'currency', message: "must be EUR, the currency of the subscription's plan" },
    ]);
    t.is(await invoicesOf(), before);
    const ok = await postInvoice(app.baseUrl, cookie, app.db, {
      customerId: owner.id,
      subscriptionId: sub.body.id,
      currency: 'EUR',
    });
    t.is(ok.status, 201);
    t.is(ok.body.subscriptionId, sub.body.id);
  },
);
