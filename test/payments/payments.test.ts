import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, pay, readInvoice, snapshot, type Ctx } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
// The order in which events of an invoice were recorded: created_at is each row's clock_timestamp(), so events
// recorded in one transaction keep their order too (migration 20261122000500).
const recordedTypes = async (invoiceId: string): Promise<string[]> =>
  (
    await app
      .db('events')
      .whereRaw("data->>'invoiceId' = ?", [invoiceId])
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('type')
  ).map((e) => e.type);

test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const ZERO_UUID = '00000000-0000-4000-8000-000000000000';

test('a payment answers 201 with the D-54 shape and raises amountPaid', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  const res = await pay(c, {
    invoiceId: invoice.id,
    amount: '40.5',
    paymentMethod: 'bank_transfer',
    providerReference: 'wire-1',
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(
    Object.keys(res.body).sort(),
    [
      'amount',
      'createdAt',
      'currency',
      'customerId',
      'id',
      'invoiceId',
      'paymentMethod',
      'providerReference',
      'receivedAt',
      'note',
      'refundedAmount',
      'status',
    ].sort(),
  );
  t.like(res.body, {
    invoiceId: invoice.id,
    customerId: invoice.customerId,
    amount: '40.50',
    currency: 'USD',
    paymentMethod: 'bank_transfer',
    providerReference: 'wire-1',
    status: 'succeeded',
    refundedAmount: '0.00',
  });
  t.regex(res.body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  t.like(await readInvoice(c, invoice.id), { status: 'issued', amountPaid: '40.50', amountDue: '59.50', paidAt: null });
  t.deepEqual(
    (await request(app.baseUrl, `/api/billing/payments/${res.body.id}`, { cookie: c.cookie })).body,
    res.body,
  );
  t.is((await app.db('payments').where({ id: res.body.id }).first()).amount, '40.50');
});

test(
  'partial then full payment: paid with paidAt; ' + 'payment.succeeded then invoice.paid with the exact payloads',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '99.99' });
    const first = await pay(c, {
      invoiceId: invoice.id,
      amount: '33.33',
      paymentMethod: 'provider_b',
      providerReference: 'inv_b_1',
    });
    t.is(first.status, 201);
    const afterFirst = await readInvoice(c, invoice.id);
    t.like(afterFirst, { status: 'issued', amountPaid: '33.33', amountDue: '66.66', paidAt: null });

    const second = await pay(c, {
      invoiceId: invoice.id,
      amount: '66.66',
      paymentMethod: 'provider_b',
      providerReference: 'inv_b_2',
    });
    t.is(second.status, 201);
    const paid = await readInvoice(c, invoice.id);
    t.like(paid, { status: 'paid', amountPaid: '99.99', amountDue: '0.00' });
    t.truthy(paid.paidAt);
    t.true(Math.abs(Date.parse(paid.paidAt) - Date.now()) < 60_000);

    t.deepEqual(await recordedTypes(invoice.id), [
      'invoice.created',
      'payment.succeeded',
      'payment.succeeded',
      'invoice.paid',
    ]);
    const events = await app.db('events').whereRaw("data->>'invoiceId' = ?", [invoice.id]).select('type', 'data');
    const succeeded = events.filter((e) => e.type === 'payment.succeeded').map((e) => e.data);
    t.deepEqual(
      succeeded.find((d) => d.paymentId === second.body.id),
      {
        paymentId: second.body.id,
        invoiceId: invoice.id,
        customerId: invoice.customerId,
        amount: '66.66',
        currency: 'USD',
        paymentMethod: 'provider_b',
        failureReason: null,
      },
    );
    const invoicePaid = events.filter((e) => e.type === 'invoice.paid');
    t.is(invoicePaid.length, 1);
    t.deepEqual(invoicePaid[0]!.data, {
      invoiceId: invoice.id,
      invoiceNumber: invoice.invoiceNumber,
      customerId: invoice.customerId,
      subscriptionId: null,
      amount: '99.99',
      amountDue: '0.00',
      currency: 'USD',
      status: 'paid',
      dueDate: invoice.dueDate,
    });
  },
);

test('a payment of the whole amount at once pays the invoice; a zero-decimal currency stays whole', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '1500', currency: 'JPY' });
  const res = await pay(c, { invoiceId: invoice.id, amount: '1500' });
  t.is(res.status, 201);
  t.like(res.body, { amount: '1500', currency: 'JPY', refundedAmount: '0' });
  t.like(await readInvoice(c, invoice.id), { status: 'paid', amountPaid: '1500', amountDue: '0' });
});

test('an overdue invoice takes payments', async (t) => {
  const invoice = await makeInvoice(c);
  await app.db('invoices').where({ id: invoice.id }).update({ status: 'overdue' });
  const res = await pay(c, { invoiceId: invoice.id, amount: '100.00' });
  t.is(res.status, 201);
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
});

test('lists filter by invoice and customer and page with a Link header', async (t) => {
  const customer = await insertCustomer(app.db);
  const a = await makeInvoice(c, { customerId: customer.id });
  const b = await makeInvoice(c, { customerId: customer.id });
  for (const amount of ['1.00', '2.00', '3.00']) await pay(c, { invoiceId: a.id, amount });
  await pay(c, { invoiceId: b.id, amount: '4.00' });
  const ofA = await request(app.baseUrl, `/api/billing/payments?invoiceId=${a.id}`, { cookie: c.cookie });
  t.deepEqual(
    ofA.body.map((p: { amount: string }) => p.amount),
    ['1.00', '2.00', '3.00'],
  );
  const ofCustomer = await request(app.baseUrl, `/api/billing/payments?customerId=${customer.id}`, {
    cookie: c.cookie,
  });
  t.is(ofCustomer.body.length, 4);
  const page = await request(app.baseUrl, `/api/billing/payments?customerId=${customer.id}&limit=3`, {
    cookie: c.cookie,
  });
  t.is(page.body.length, 3);
  const link = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  t.truthy(link);
  const next = await request(app.baseUrl, link!, { cookie: c.cookie });
  t.deepEqual(
    next.body.map((p: { amount: string }) => p.amount),
    ['4.00'],
  );
  t.is((await request(app.baseUrl, '/api/billing/payments?invoiceId=nope', { cookie: c.cookie })).status, 400);
});

test('reading an unknown or malformed payment id is 404', async (t) => {
  t.is((await request(app.baseUrl, `/api/billing/payments/${ZERO_UUID}`, { cookie: c.cookie })).status, 404);
  t.is((await request(app.baseUrl, '/api/billing/payments/nope', { cookie: c.cookie })).status, 404);
});

test('payments need an admin session', async (t) => {
  t.is((await request(app.baseUrl, '/api/billing/payments')).status, 401);
  t.is(
    (
      await request(app.baseUrl, '/api/billing/payments', {
        body: { invoiceId: ZERO_UUID, amount: '1.00', paymentMethod: 'manual' },
      })
    ).status,
    401,
  );
});

// Refusals: each answers its documented code and changes nothing (serial: the snapshot is the whole database).
const refusals: [string, (id: string) => Record<string, unknown>, number, string, string?][] = [
  ['a JSON number amount', (id) => ({ invoiceId: id, amount: 10 }), 400, 'invalid_request', 'not a JSON number'],
  ['an exponent amount "1.5e3"', (id) => ({ invoiceId: id, amount: '1.5e3' }), 400, 'invalid_request'],
  ['a float-looking ".5"', (id) => ({ invoiceId: id, amount: '.5' }), 400, 'invalid_request'],
  ['a "+5" amount', (id) => ({ invoiceId: id, amount: '+5' }), 400, 'invalid_request'],
  ['an empty amount', (id) => ({ invoiceId: id, amount: '' }), 400, 'invalid_request'],
  ['a word for an amount', (id) => ({ invoiceId: id, amount: 'Infinity' }), 400, 'invalid_request'],
  ['a missing amount', (id) => ({ invoiceId: id }), 400, 'invalid_request'],
  [
    'more decimals than USD has',
    (id) => ({ invoiceId: id, amount: '10.001' }),
    400,
    'invalid_amount',
    'at most 2 decimal places',
  ],
  ['a zero amount', (id) => ({ invoiceId: id, amount: '0' }), 400, 'invalid_request', 'amount: must be greater than 0'],
  [
    'a negative amount',
    (id) => ({ invoiceId: id, amount: '-5.00' }),
    400,
    'invalid_request',
    'amount: must be greater than 0',
  ],
  [
    'more than is due',
    (id) => ({ invoiceId: id, amount: '100.01' }),
    400,
    'amount_exceeds_due',
    'at most the amount due, 100.00 USD',
  ],
  [
    'an unknown payment method',
    (id) => ({ invoiceId: id, amount: '1.00', paymentMethod: 'cash' }),
    400,
    'invalid_request',
  ],
  ['an unknown invoice', () => ({ invoiceId: ZERO_UUID, amount: '1.00' }), 400, 'invoice_not_found'],
  ['a malformed invoice id', () => ({ invoiceId: 'inv-1', amount: '1.00' }), 400, 'invalid_request'],
];
for (const [name, body, status, code, message] of refusals) {
  test.serial(`refused: ${name} -> ${status} ${code}, nothing changed`, async (t) => {
    const invoice = await makeInvoice(c);
    const before = await snapshot(app.db);
    const res = await pay(c, body(invoice.id));
    t.is(res.status, status, res.text);
    t.is(res.body.error.code, code);
    if (message) t.true(res.body.error.message.includes(message), res.body.error.message);
    t.deepEqual(await snapshot(app.db), before);
  });
}

for (const state of ['draft', 'void'] as const) {
  test.serial(`a ${state} invoice is not payable: 409 invoice_not_payable, nothing changed`, async (t) => {
    const invoice = await makeInvoice(c, { status: 'draft' });
    if (state === 'void')
      await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
        method: 'PUT',
        cookie: c.cookie,
        body: { status: 'void' },
      });
    const before = await snapshot(app.db);
    const res = await pay(c, { invoiceId: invoice.id, amount: '1.00' });
    t.is(res.status, 409);
    t.is(res.body.error.code, 'invoice_not_payable');
    t.deepEqual(await snapshot(app.db), before);
  });
}

test.serial('a paid invoice has nothing due: 400 amount_exceeds_due, nothing changed', async (t) => {
  const invoice = await makeInvoice(c);
  await pay(c, { invoiceId: invoice.id, amount: '100.00' });
  const before = await snapshot(app.db);
  const res = await pay(c, { invoiceId: invoice.id, amount: '0.01' });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'amount_exceeds_due');
  t.deepEqual(await snapshot(app.db), before);
});

test.serial(
  'a repeated (paymentMethod, providerReference) is 409 duplicate_payment, nothing changed; another method may ' +
    'reuse it',
  async (t) => {
    const invoice = await makeInvoice(c);
    t.is(
      (
        await pay(c, {
          invoiceId: invoice.id,
          amount: '10.00',
          paymentMethod: 'provider_a',
          providerReference: 'pi_dup',
        })
      ).status,
      201,
    );
    const other = await makeInvoice(c);
    const before = await snapshot(app.db);
    for (const target of [invoice.id, other.id]) {
      const res = await pay(c, {
        invoiceId: target,
        amount: '10.00',
        paymentMethod: 'provider_a',
        providerReference: 'pi_dup',
      });
      t.is(res.status, 409);
      t.is(res.body.error.code, 'duplicate_payment');
    }
    t.deepEqual(await snapshot(app.db), before);
    t.is(
      (
        await pay(c, {
          invoiceId: invoice.id,
          amount: '10.00',
          paymentMethod: 'provider_c',
          providerReference: 'pi_dup',
        })
      ).status,
      201,
    );
  },
);

test.serial('an Idempotency-Key replays the payment instead of paying twice', async (t) => {
  const invoice = await makeInvoice(c);
  const headers = { 'Idempotency-Key': `pay-${invoice.id}` };
  const first = await pay(c, { invoiceId: invoice.id, amount: '25.00' }, headers);
  const again = await pay(c, { invoiceId: invoice.id, amount: '25.00' }, headers);
  t.is(first.status, 201);
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is((await readInvoice(c, invoice.id)).amountPaid, '25.00');
});
