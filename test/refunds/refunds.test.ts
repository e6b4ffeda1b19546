import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, readInvoice, snapshot, type Ctx } from '../payments/fixtures.ts';
import { makePayment, readPayment, refund } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const ZERO_UUID = '00000000-0000-4000-8000-000000000000';

test('partial then full refund of a manual payment: statuses and amounts; the invoice stays paid', async (t) => {
  const { invoice, payment } = await makePayment(c, { amount: '80.00' });
  const first = await refund(c, { paymentId: payment.id, amount: '30.25', reason: 'damaged item' });
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    paymentId: payment.id,
    amount: '30.25',
    currency: 'USD',
    reason: 'damaged item',
    status: 'succeeded',
    providerRefundId: null,
  });
  for (const key of ['id', 'paymentId', 'amount', 'reason', 'status', 'createdAt']) t.true(key in first.body, key);
  t.like(await readPayment(c, payment.id), { status: 'partially_refunded', refundedAmount: '30.25', amount: '80.00' });

  const rest = await refund(c, { paymentId: payment.id, amount: '49.75', reasonCode: 'requested_by_customer' });
  t.is(rest.status, 201);
  t.like(rest.body, { reason: 'Goodwill', reasonCode: 'requested_by_customer' });
  t.like(await readPayment(c, payment.id), { status: 'refunded', refundedAmount: '80.00' });
  // A refund gives money back; it does not reopen the invoice.
  t.like(await readInvoice(c, invoice.id), { status: 'paid', amountPaid: '80.00', amountDue: '0.00' });
});

test('refunds of provider_b, provider_c and bank transfers are recorded without a provider call', async (t) => {
  for (const [paymentMethod, providerReference] of [
    ['provider_b', 'inv_b_r'],
    ['provider_c', 'ord_c_r'],
    ['bank_transfer', null],
  ] as const) {
    const { payment } = await makePayment(c, { amount: '10.00', paymentMethod, providerReference });
    const res = await refund(c, { paymentId: payment.id, amount: '10.00' });
    t.is(res.status, 201, `${paymentMethod}: ${res.text}`);
    t.is(res.body.status, 'succeeded');
    t.is((await readPayment(c, payment.id)).status, 'refunded');
  }
});

test('GET /api/billing/refunds lists by payment and pages', async (t) => {
  const { payment } = await makePayment(c, { amount: '9.00' });
  for (const amount of ['1.00', '2.00', '3.00']) await refund(c, { paymentId: payment.id, amount });
  const all = await request(app.baseUrl, `/api/billing/refunds?paymentId=${payment.id}`, { cookie: c.cookie });
  t.deepEqual(
    all.body.map((r: { amount: string }) => r.amount),
    ['1.00', '2.00', '3.00'],
  );
  const page = await request(app.baseUrl, `/api/billing/refunds?paymentId=${payment.id}&limit=2`, { cookie: c.cookie });
  t.is(page.body.length, 2);
  t.regex(page.headers.get('link') ?? '', /startingAfter=.*rel="next"/);
  t.is((await request(app.baseUrl, '/api/billing/refunds?paymentId=x', { cookie: c.cookie })).status, 400);
});

test('20 concurrent refunds never exceed the payment', async (t) => {
  const { payment } = await makePayment(c, { amount: '100.00' });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => refund(c, { paymentId: payment.id, amount: '10.00' })),
  );
  t.is(answers.filter((r) => r.status === 201).length, 10);
  t.true(
    answers
      .filter((r) => r.status !== 201)
      .every((r) => r.status === 400 && r.body.error.code === 'amount_exceeds_refundable'),
  );
  t.like(await readPayment(c, payment.id), { refundedAmount: '100.00', status: 'refunded' });
  const sum = await app.db('refunds').where({ payment_id: payment.id }).sum<{ s: string }>('amount as s').first();
  t.is(sum!.s, '100.00');
});

test('refunds need an admin session', async (t) => {
  t.is(
    (await request(app.baseUrl, '/api/billing/refunds', { body: { paymentId: ZERO_UUID, amount: '1.00' } })).status,
    401,
  );
  t.is((await request(app.baseUrl, '/api/billing/refunds')).status, 401);
});

const refusals: [string, (id: string) => Record<string, unknown>, string, string?][] = [
  ['a JSON number amount', (id) => ({ paymentId: id, amount: 5 }), 'invalid_request', 'not a JSON number'],
  ['an exponent amount "1.5e3"', (id) => ({ paymentId: id, amount: '1.5e3' }), 'invalid_request'],
  ['a "5." amount', (id) => ({ paymentId: id, amount: '5.' }), 'invalid_request'],
  ['a word for an amount', (id) => ({ paymentId: id, amount: 'abc' }), 'invalid_request'],
  [
    'more decimals than USD has',
    (id) => ({ paymentId: id, amount: '1.005' }),
    'invalid_amount',
    'at most 2 decimal places',
  ],
  ['a zero amount', (id) => ({ paymentId: id, amount: '0.00' }), 'invalid_request', 'amount: must be greater than 0'],
  [
    'a negative amount',
    (id) => ({ paymentId: id, amount: '-1.00' }),
    'invalid_request',
    'amount: must be greater than 0',
  ],
  [
    'more than was paid',
    (id) => ({ paymentId: id, amount: '50.01' }),
    'amount_exceeds_refundable',
    'at most what is left to refund, 50.00 USD',
  ],
  ['an unknown payment', () => ({ paymentId: ZERO_UUID, amount: '1.00' }), 'payment_not_found'],
  ['a malformed payment id', () => ({ paymentId: 'pay_1', amount: '1.00' }), 'invalid_request'],
  [
    'a reason of 501 characters',
    (id) => ({ paymentId: id, amount: '1.00', reason: 'x'.repeat(501) }),
    'invalid_request',
  ],
  ['no reason (C-14)', (id) => ({ paymentId: id, amount: '1.00', reason: '' }), 'invalid_request'],
  [
    'a reason code off the list (C-14)',
    (id) => ({ paymentId: id, amount: '1.00', reasonCode: 'changed_mind' }),
    'invalid_request',
  ],
];
for (const [name, body, code, message] of refusals) {
  test.serial(`refused: ${name} -> 400 ${code}, nothing changed`, async (t) => {
    const { payment } = await makePayment(c, { amount: '50.00' });
    const before = await snapshot(app.db);
    const res = await refund(c, body(payment.id));
    t.is(res.status, 400, res.text);
    t.is(res.body.error.code, code);
    if (message) t.true(res.body.error.message.includes(message), res.body.error.message);
    t.deepEqual(await snapshot(app.db), before);
  });
}

test.serial('after a partial refund only the rest is refundable', async (t) => {
  const { payment } = await makePayment(c, { amount: '50.00' });
  t.is((await refund(c, { paymentId: payment.id, amount: '20.00' })).status, 201);
  const before = await snapshot(app.db);
  const res = await refund(c, { paymentId: payment.id, amount: '30.01' });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'amount_exceeds_refundable');
  t.true(res.body.error.message.includes('30.00 USD'));
  t.deepEqual(await snapshot(app.db), before);
});
