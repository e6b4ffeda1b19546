import test from 'ava';
import { AppError } from '../../src/errors.ts';
import { RefundGatewayError } from '../../src/refunds/gateway.ts';
import { toMinorUnits } from '../../src/money.ts';
import { providerARefundGateway } from '../../src/refunds/provider-a-refund-gateway.ts';
import { resumePendingRefunds } from '../../src/refunds/resume.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, readInvoice, snapshot, type Ctx } from '../payments/fixtures.ts';
import { startFakeProviderA, type FakeProviderA } from '../helpers/fake-providers.ts';
import { makePayment, readPayment, refund } from './fixtures.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let app: TestApp;
let c: Ctx;
let provider: FakeProviderA;
let references = 0;
const nextReference = () => `pi_test_${++references}`;

test.before(async () => {
  provider = await startFakeProviderA('sk_test');
  app = await startTestApp({ PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: 'sk_test' });
  c = await adminCtx(app);
});
test.after.always(async () => {
  await app?.close();
  await provider?.close();
});

const requestsFor = (intent: string) => provider.requests.filter((r) => r.form.payment_intent === intent);
const config = () => ({ PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: 'sk_test' });

test('a provider_a refund goes through provider_a first, in its wire format, then is recorded', async (t) => {
  const intent = nextReference();
  const { invoice, payment } = await makePayment(c, {
    amount: '50.00',
    paymentMethod: 'provider_a',
    providerReference: intent,
  });
  const res = await refund(c, { paymentId: payment.id, amount: '12.34', reason: 'requested_by_customer' });
  t.is(res.status, 201, res.text);
  t.like(res.body, { paymentId: payment.id, amount: '12.34', status: 'succeeded', reason: 'requested_by_customer' });
  t.regex(res.body.providerRefundId, /^re_fake_\d+$/);

  const [sent, ...more] = requestsFor(intent);
  t.is(more.length, 0);
  t.is(sent!.method, 'POST');
  t.is(sent!.path, '/v1/refunds');
  t.is(sent!.headers.authorization, 'Bearer sk_test');
  t.is(sent!.headers['content-type'], 'application/x-www-form-urlencoded');
  t.deepEqual(sent!.form, { payment_intent: intent, amount: '1234' });
  // The provider's idempotency key is the refund's own id.
  t.is(sent!.headers['idempotency-key'], res.body.id);

  t.like(await readPayment(c, payment.id), { status: 'partially_refunded', refundedAmount: '12.34' });
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
  t.is((await app.db('refunds').where({ id: res.body.id }).first()).provider_refund_id, res.body.providerRefundId);
});

test('amounts go to provider_a in minor units of the payment currency', async (t) => {
  t.is(toMinorUnits('12.34', 'USD'), '1234');
  t.is(toMinorUnits('1500', 'JPY'), '1500');
  t.is(toMinorUnits('1.005', 'BHD'), '1005');
  t.is(toMinorUnits('0.01', 'EUR'), '1');
  const intent = nextReference();
  const { payment } = await makePayment(c, {
    amount: '3000',
    currency: 'JPY',
    paymentMethod: 'provider_a',
    providerReference: intent,
  });
  t.is((await refund(c, { paymentId: payment.id, amount: '1000' })).status, 201);
  t.is(requestsFor(intent)[0]!.form.amount, '1000');
});

test.serial("provider_a's refusal answers 502 provider_error with its message, and nothing is recorded", async (t) => {
  const intent = nextReference();
  provider.behave(intent, {
    status: 402,
    body: { error: { type: 'card_error', message: 'Charge ch_123 has been charged back.' } },
  });
  const { payment } = await makePayment(c, { amount: '40.00', paymentMethod: 'provider_a', providerReference: intent });
  const before = await snapshot(app.db);
  const res = await refund(c, { paymentId: payment.id, amount: '10.00' });
  t.is(res.status, 502);
  t.is(res.body.error.code, 'provider_error');
  t.is(res.body.error.message, 'provider_a refused the refund: Charge ch_123 has been charged back.');
  t.deepEqual(await snapshot(app.db), before);
  t.like(await readPayment(c, payment.id), { status: 'succeeded', refundedAmount: '0.00' });
});

test.serial('a refund answered as failed and a wrong secret are refusals: 502 with nothing recorded', async (t) => {
  const intent = nextReference();
  provider.behave(intent, {
    status: 200,
    body: { id: 're_failed', object: 'refund', status: 'failed', failure_reason: 'expired_or_canceled_card' },
  });
  const { payment: failed } = await makePayment(c, {
    amount: '40.00',
    paymentMethod: 'provider_a',
    providerReference: intent,
  });
  const before = await snapshot(app.db);
  const res = await refund(c, { paymentId: failed.id, amount: '10.00' });
  t.is(res.status, 502);
  t.is(res.body.error.message, 'provider_a refund re_failed failed: expired_or_canceled_card');
  t.deepEqual(await snapshot(app.db), before);

  const { payment } = await makePayment(c, {
    amount: '40.00',
    paymentMethod: 'provider_a',
    providerReference: nextReference(),
  });
  const error = await t.throwsAsync(
    createRefund(app.db, { paymentId: payment.id, amount: '1.00', reason: null }, SYSTEM_ACTOR, {
      config: { ...config(), PROVIDER_A_SECRET_KEY: 'sk_wrong' },
    }),
    { instanceOf: AppError },
  );
  t.is((error as AppError).code, 'provider_error');
  t.is((error as AppError).message, 'provider_a refused the refund: Invalid API Key provided');
  t.is((await app.db('refunds').where({ payment_id: payment.id })).length, 0);
});

test.serial('an unconfigured provider_a is a refusal: 502 with nothing recorded', async (t) => {
  const { payment } = await makePayment(c, {
    amount: '40.00',
    paymentMethod: 'provider_a',
    providerReference: nextReference(),
  });
  const before = await snapshot(app.db);
  const options = { config: { PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: undefined } };
  const error = await t.throwsAsync(
    createRefund(app.db, { paymentId: payment.id, amount: '10.00', reason: null }, SYSTEM_ACTOR, options),
    { instanceOf: AppError },
  );
  t.is((error as AppError).code, 'provider_error');
  t.is((error as AppError).message, 'provider_a is not configured (PROVIDER_A_SECRET_KEY is not set)');
  t.deepEqual(await snapshot(app.db), before);
});

test.serial(
  'a 500, an unreadable answer, a timeout or no connection is an unknown outcome: 502 saying so, the amount kept ' +
    'reserved, nothing refunded',
  async (t) => {
    const cases: [Record<string, unknown>, Parameters<typeof createRefund>[3] | undefined, string][] = [
      [
        { status: 500, body: { error: { type: 'api_error', message: 'Something went wrong' } } },
        undefined,
        'provider_a failed on the refund (HTTP 500): Something went wrong',
      ],
      [{ status: 200, body: '<html>' }, undefined, 'provider_a answered without a refund id'],
      [
        { delayMs: 2_000 },
        { config: config(), gatewayFor: () => providerARefundGateway(config(), { timeoutMs: 200 }) },
        'provider_a did not answer within 0.2 s',
      ],
      [
        {},
        { config: { PROVIDER_A_API_URL: 'http://127.0.0.1:9', PROVIDER_A_SECRET_KEY: 'sk_test' } },
        'provider_a could not be reached',
      ],
    ];
    for (const [behaviour, options, cause] of cases) {
      const intent = nextReference();
      provider.behave(intent, behaviour);
      const { payment } = await makePayment(c, {
        amount: '40.00',
        paymentMethod: 'provider_a',
        providerReference: intent,
      });
      let message: string;
      if (options) {
        const error = await t.throwsAsync(
          createRefund(app.db, { paymentId: payment.id, amount: '10.00', reason: null }, SYSTEM_ACTOR, options),
          { instanceOf: AppError },
        );
        t.is((error as AppError).code, 'provider_error');
        message = (error as AppError).message;
      } else {
        const res = await refund(c, { paymentId: payment.id, amount: '10.00' });
        t.is(res.status, 502);
        t.is(res.body.error.code, 'provider_error');
        message = res.body.error.message;
      }
      const [pending, ...more] = await app.db('refunds').where({ payment_id: payment.id });
      t.is(more.length, 0, cause);
      t.like(pending, { status: 'pending', amount: '10.00', provider_refund_id: null, call_lease_until: null }, cause);
      t.is(
        message,
        `${cause}; whether the refund was made is unknown: 10.00 USD stay reserved as pending refund ` +
          `${pending.id}, and asking for the same refund again (this payment, this amount) completes it without ` +
          `refunding twice`,
      );
      // Nothing is refunded on the payment; the reservation holds the amount back from other refunds.
      t.like(await readPayment(c, payment.id), { status: 'succeeded', refundedAmount: '0.00' });
      const other = await refund(c, { paymentId: payment.id, amount: '30.01' });
      t.is(other.body.error.code, 'amount_exceeds_refundable', cause);
    }
  },
);

test('the adapter tells a refusal (definite) from an unknown outcome', async (t) => {
  const refused = nextReference();
  provider.behave(refused, { status: 400, body: { error: { message: 'No such payment_intent' } } });
  const slow = nextReference();
  provider.behave(slow, { delayMs: 2_000 });
  const gateway = providerARefundGateway(config());
  const payment = { provider_reference: refused, currency: 'USD' } as Parameters<typeof gateway.refund>[0];
  const declined = await t.throwsAsync(gateway.refund(payment, '1.00', 'key-1'), { instanceOf: RefundGatewayError });
  t.true((declined as RefundGatewayError).definite, declined?.message);
  const impatient = providerARefundGateway(config(), { timeoutMs: 200 });
  const timedOut = await t.throwsAsync(impatient.refund({ ...payment, provider_reference: slow }, '1.00', 'key-2'), {
    instanceOf: RefundGatewayError,
  });
  t.false((timedOut as RefundGatewayError).definite);
});

test(
  'a provider_a payment without providerReference cannot be refunded through the provider: 409 ' +
    'payment_not_refundable',
  async (t) => {
    const { payment } = await makePayment(c, { amount: '40.00', paymentMethod: 'provider_a', providerReference: null });
    const res = await refund(c, { paymentId: payment.id, amount: '1.00' });
    t.is(res.status, 409);
    t.is(res.body.error.code, 'payment_not_refundable');
    t.is((await app.db('refunds').where({ payment_id: payment.id })).length, 0);
  },
);

test('the payment is not locked during the provider call, and its reservation holds the money back', async (t) => {
  const intent = nextReference();
  let release!: () => void;
  provider.behave(intent, { hold: new Promise<void>((r) => (release = r)) });
  const { payment } = await makePayment(c, {
    amount: '100.00',
    paymentMethod: 'provider_a',
    providerReference: intent,
  });
  const first = refund(c, { paymentId: payment.id, amount: '70.00' });
  await provider.received(intent);

  // While provider_a thinks, the payment row is free to lock...
  const locked = await app.db.transaction(async (trx) =>
    trx('payments').where({ id: payment.id }).forUpdate().noWait().first(),
  );
  t.is(locked.id, payment.id);
  const pending = await app.db('refunds').where({ payment_id: payment.id }).select('status', 'amount');
  t.deepEqual(pending, [{ status: 'pending', amount: '70.00' }]);
  // ...and a second refund cannot spend the reserved 70.00.
  const second = await refund(c, { paymentId: payment.id, amount: '40.00' });
  t.is(second.status, 400);
  t.is(second.body.error.code, 'amount_exceeds_refundable');
  t.true(second.body.error.message.includes('30.00 USD'));

  release();
  const done = await first;
  t.is(done.status, 201);
  t.is(done.body.status, 'succeeded');
  t.like(await readPayment(c, payment.id), { refundedAmount: '70.00', status: 'partially_refunded' });
  t.is((await refund(c, { paymentId: payment.id, amount: '30.00' })).status, 201);
  t.like(await readPayment(c, payment.id), { refundedAmount: '100.00', status: 'refunded' });
});

test(
  'concurrent provider_a refunds never exceed the payment, ' + 'and only the admitted ones reach the provider',
  async (t) => {
    const intent = nextReference();
    provider.behave(intent, { delayMs: 50 });
    const { payment } = await makePayment(c, {
      amount: '100.00',
      paymentMethod: 'provider_a',
      providerReference: intent,
    });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => refund(c, { paymentId: payment.id, amount: '30.00' })),
    );
    t.is(answers.filter((r) => r.status === 201).length, 3);
    t.true(answers.filter((r) => r.status !== 201).every((r) => r.body.error.code === 'amount_exceeds_refundable'));
    t.is(requestsFor(intent).length, 3);
    t.like(await readPayment(c, payment.id), { refundedAmount: '90.00', status: 'partially_refunded' });
  },
);

test('under an Idempotency-Key a provider_a refund is made once and replayed', async (t) => {
  const intent = nextReference();
  const { payment } = await makePayment(c, { amount: '20.00', paymentMethod: 'provider_a', providerReference: intent });
  const headers = { 'Idempotency-Key': `refund-${payment.id}` };
  const first = await refund(c, { paymentId: payment.id, amount: '5.00' }, headers);
  const again = await refund(c, { paymentId: payment.id, amount: '5.00' }, headers);
  t.is(first.status, 201);
  t.deepEqual(again.body, first.body);
  t.is(requestsFor(intent).length, 1);
  t.is((await readPayment(c, payment.id)).refundedAmount, '5.00');
});

test(
  'resumePendingRefunds finishes reservations a stopped process left behind, ' + 'with the same Idempotency-Key',
  async (t) => {
    const confirmed = nextReference();
    const declined = nextReference();
    provider.behave(declined, { status: 400, body: { error: { message: 'Charge already refunded' } } });
    const a = await makePayment(c, { amount: '10.00', paymentMethod: 'provider_a', providerReference: confirmed });
    const b = await makePayment(c, { amount: '10.00', paymentMethod: 'provider_a', providerReference: declined });
    const c2 = await makePayment(c, {
      amount: '10.00',
      paymentMethod: 'provider_a',
      providerReference: nextReference(),
    });
    const longAgo = new Date(Date.now() - 60 * 60_000);
    const [stale] = await app
      .db('refunds')
      .insert({ payment_id: a.payment.id, amount: '4.00', status: 'pending', created_at: longAgo })
      .returning('id');
    await app
      .db('refunds')
      .insert({ payment_id: b.payment.id, amount: '4.00', status: 'pending', created_at: longAgo });
    // A reservation a live request may still be working on is left alone.
    await app.db('refunds').insert({ payment_id: c2.payment.id, amount: '4.00', status: 'pending' });

    const outcome = await resumePendingRefunds(app.db, { config: config() });
    t.deepEqual(outcome, { completed: 1, released: 1, left: 0 });
    t.is(requestsFor(confirmed)[0]!.headers['idempotency-key'], stale.id);
    t.like(await app.db('refunds').where({ id: stale.id }).first(), { status: 'succeeded' });
    t.like(await readPayment(c, a.payment.id), { refundedAmount: '4.00', status: 'partially_refunded' });
    t.is((await app.db('refunds').where({ payment_id: b.payment.id })).length, 0);
    t.is((await readPayment(c, b.payment.id)).refundedAmount, '0.00');
    t.is((await app.db('refunds').where({ payment_id: c2.payment.id }).first()).status, 'pending');
  },
);

test('pending refunds are listed with their status', async (t) => {
  const { payment } = await makePayment(c, { amount: '10.00', paymentMethod: 'manual' });
  await app.db('refunds').insert({ payment_id: payment.id, amount: '1.00', status: 'pending' });
  const list = await request(app.baseUrl, `/api/billing/refunds?paymentId=${payment.id}`, { cookie: c.cookie });
  t.is(list.body[0].status, 'pending');
});
