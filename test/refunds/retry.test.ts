/**
 * A provider_a refund whose answer is lost (a 500 or a timeout after provider_a made it) must not be made
 * twice when the admin asks again: the retry goes under the same Idempotency-Key, provider_a answers the
 * refund it made, and it is recorded once.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { AppError } from '../../src/errors.ts';
import { providerARefundGateway } from '../../src/refunds/provider-a-refund-gateway.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { resumePendingRefundsHandler } from '../../src/refunds/resume-pending.handler.ts';
import { resumePendingRefundsJob } from '../../src/refunds/resume-pending.job.ts';
import { resumePendingRefunds } from '../../src/refunds/resume.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeProviderA, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, type Ctx } from '../payments/fixtures.ts';
import { makePayment, readPayment, refund } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
let provider: FakeProviderA;
let references = 0;
const nextReference = () => `pi_retry_${++references}`;

test.before(async () => {
  provider = await startFakeProviderA('sk_test');
  app = await startTestApp({ PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: 'sk_test' });
  c = await adminCtx(app);
});
test.after.always(async () => {
  await app?.close();
  await provider?.close();
});

const config = () => ({ PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: 'sk_test' });
const refundsAt = (intent: string) => provider.refunds.filter((r) => r.paymentIntent === intent);
const keysSent = (intent: string) =>
  provider.requests.filter((r) => r.form.payment_intent === intent).map((r) => r.headers['idempotency-key']);
const rowsOf = (paymentId: string) => app.db('refunds').where({ payment_id: paymentId }).orderBy('created_at');

test('provider_a refunds but answers 500; the admin asks again: one refund at provider_a, one recorded', async (t) => {
  const intent = nextReference();
  const { payment } = await makePayment(c, { amount: '80.00', paymentMethod: 'provider_a', providerReference: intent });
  provider.behave(intent, { actsThenFails: true, status: 500 });
  const first = await refund(c, { paymentId: payment.id, amount: '25.00', reason: 'requested_by_customer' });
  t.is(first.status, 502);
  t.is(first.body.error.code, 'provider_error');
  t.regex(first.body.error.message, /whether the refund was made is unknown/);
  t.is(refundsAt(intent).length, 1, 'provider_a did refund');
  t.like(await readPayment(c, payment.id), { refundedAmount: '0.00' });

  provider.behave(intent, {});
  const retry = await refund(c, { paymentId: payment.id, amount: '25.00', reason: 'requested_by_customer' });
  t.is(retry.status, 201, retry.text);
  t.like(retry.body, { status: 'succeeded', amount: '25.00', providerRefundId: refundsAt(intent)[0]!.id });
  t.is(refundsAt(intent).length, 1, 'the retry made no second refund');
  const [sentFirst, sentRetry, ...more] = keysSent(intent);
  t.is(more.length, 0);
  t.is(sentRetry, sentFirst);
  t.is(sentFirst, retry.body.id, "the key is the reservation's id, kept from the first ask");
  const rows = await rowsOf(payment.id);
  t.deepEqual(
    rows.map((r) => [r.id, r.status, r.amount]),
    [[retry.body.id, 'succeeded', '25.00']],
  );
  t.like(await readPayment(c, payment.id), { refundedAmount: '25.00', status: 'partially_refunded' });

  // The refund is done: asking for the same amount again is a new refund, under a new key.
  const another = await refund(c, { paymentId: payment.id, amount: '25.00' });
  t.is(another.status, 201);
  t.not(another.body.id, retry.body.id);
  t.is(refundsAt(intent).length, 2);
  t.like(await readPayment(c, payment.id), { refundedAmount: '50.00' });
});

test('provider_a refunds but the call times out; the admin asks again: one refund, one recorded', async (t) => {
  const intent = nextReference();
  const { payment } = await makePayment(c, { amount: '30.00', paymentMethod: 'provider_a', providerReference: intent });
  provider.behave(intent, { actsThenFails: true, delayMs: 1_000 });
  const impatient = { config: config(), gatewayFor: () => providerARefundGateway(config(), { timeoutMs: 200 }) };
  const error = await t.throwsAsync(
    createRefund(app.db, { paymentId: payment.id, amount: '30.00', reason: null }, SYSTEM_ACTOR, impatient),
    { instanceOf: AppError },
  );
  t.is((error as AppError).code, 'provider_error');
  t.regex(
    (error as AppError).message,
    /^provider_a did not answer within 0\.2 s; whether the refund was made is unknown/,
  );
  t.is(refundsAt(intent).length, 1);

  provider.behave(intent, {});
  const retry = await refund(c, { paymentId: payment.id, amount: '30.00' });
  t.is(retry.status, 201, retry.text);
  t.is(refundsAt(intent).length, 1);
  t.is(new Set(keysSent(intent)).size, 1);
  t.is((await rowsOf(payment.id)).length, 1);
  t.like(await readPayment(c, payment.id), { refundedAmount: '30.00', status: 'refunded' });
});

test('a 500 before provider_a acted: the retry makes the refund, once', async (t) => {
  const intent = nextReference();
  const { payment } = await makePayment(c, { amount: '10.00', paymentMethod: 'provider_a', providerReference: intent });
  provider.behave(intent, { status: 503, body: { error: { type: 'api_error', message: 'Service unavailable' } } });
  t.is((await refund(c, { paymentId: payment.id, amount: '4.00' })).status, 502);
  t.is(refundsAt(intent).length, 0);
  provider.behave(intent, {});
  const retry = await refund(c, { paymentId: payment.id, amount: '4.00' });
  t.is(retry.status, 201);
  t.is(refundsAt(intent).length, 1);
  t.is(new Set(keysSent(intent)).size, 1);
  t.like(await readPayment(c, payment.id), { refundedAmount: '4.00' });
});

test('under an Idempotency-Key: provider_a refunds but answers 500; the same request again refunds once', async (t) => {
  const intent = nextReference();
  const { payment } = await makePayment(c, { amount: '60.00', paymentMethod: 'provider_a', providerReference: intent });
  const headers = { 'Idempotency-Key': `refund-retry-${payment.id}` };
  provider.behave(intent, { actsThenFails: true, status: 500 });
  const first = await refund(c, { paymentId: payment.id, amount: '60.00' }, headers);
  t.is(first.status, 502);
  t.regex(
    first.body.error.message,
    /sending this request again with the same Idempotency-Key completes it without refunding twice$/,
  );
  // The keyed request's transaction rolled back, its reservation with it (D-6: a 5xx stores nothing).
  t.is((await rowsOf(payment.id)).length, 0);
  t.is(refundsAt(intent).length, 1);

  provider.behave(intent, {});
  const retry = await refund(c, { paymentId: payment.id, amount: '60.00' }, headers);
  t.is(retry.status, 201, retry.text);
  t.is(retry.body.providerRefundId, refundsAt(intent)[0]!.id);
  t.is(refundsAt(intent).length, 1);
  const [sentFirst, sentRetry] = keysSent(intent);
  t.is(sentRetry, sentFirst);
  t.regex(String(sentFirst), /^refund_[0-9a-f]{64}$/);
  t.is((await rowsOf(payment.id)).length, 1);
  t.like(await readPayment(c, payment.id), { refundedAmount: '60.00', status: 'refunded' });
  // And it replays from now on.
  const replay = await refund(c, { paymentId: payment.id, amount: '60.00' }, headers);
  t.deepEqual(replay.body, retry.body);
  t.is(keysSent(intent).length, 2);
});

test(
  'the digest of a keyed request differs per key and per body, ' + 'so different requests are different refunds',
  async (t) => {
    const intent = nextReference();
    const { payment } = await makePayment(c, {
      amount: '20.00',
      paymentMethod: 'provider_a',
      providerReference: intent,
    });
    t.is((await refund(c, { paymentId: payment.id, amount: '5.00' }, { 'Idempotency-Key': 'k-one' })).status, 201);
    t.is((await refund(c, { paymentId: payment.id, amount: '5.00' }, { 'Idempotency-Key': 'k-two' })).status, 201);
    const keys = keysSent(intent);
    t.is(keys.length, 2);
    t.not(keys[0], keys[1]);
    t.is(refundsAt(intent).length, 2);
    t.like(await readPayment(c, payment.id), { refundedAmount: '10.00' });
  },
);

test.serial(
  'the sweep finishes an unknown outcome nobody asked for again, under its key, and leaves a live call alone',
  async (t) => {
    const intent = nextReference();
    const { payment } = await makePayment(c, {
      amount: '50.00',
      paymentMethod: 'provider_a',
      providerReference: intent,
    });
    provider.behave(intent, { actsThenFails: true, status: 500 });
    t.is((await refund(c, { paymentId: payment.id, amount: '20.00' })).status, 502);
    provider.behave(intent, {});
    const [inDoubt] = await rowsOf(payment.id);
    // A reservation whose call is running now (its lease ahead) is not asked for twice, even when old.
    const live = nextReference();
    const other = await makePayment(c, { amount: '50.00', paymentMethod: 'provider_a', providerReference: live });
    const [running] = await app
      .db('refunds')
      .insert({
        payment_id: other.payment.id,
        amount: '5.00',
        status: 'pending',
        created_at: new Date(Date.now() - 3_600_000),
        call_lease_until: new Date(Date.now() + 60_000),
      })
      .returning('id');

    // Any age: the in-doubt reservation is seconds old here, the live one an hour.
    const outcome = await resumePendingRefunds(app.db, { config: config(), olderThanMs: 0 });
    t.deepEqual(outcome, { completed: 1, released: 0, left: 0 });
    t.like(await app.db('refunds').where({ id: inDoubt.id }).first(), {
      status: 'succeeded',
      provider_refund_id: refundsAt(intent)[0]!.id,
    });
    t.is(refundsAt(intent).length, 1);
    t.like(await readPayment(c, payment.id), { refundedAmount: '20.00' });
    t.is(keysSent(live).length, 0);
    t.is((await app.db('refunds').where({ id: running.id }).first()).status, 'pending');
    // The admin's retry after the sweep: the refund is done, so it is a new one (the list shows the first).
    const list = await request(app.baseUrl, `/api/billing/refunds?paymentId=${payment.id}`, { cookie: c.cookie });
    t.deepEqual(
      list.body.map((r: { status: string }) => r.status),
      ['succeeded'],
    );
  },
);

test.serial(
  'the sweep is a scheduled job of the lifecycle worker that finishes reservations left over ten minutes',
  async (t) => {
    t.like(resumePendingRefundsJob, { name: 'refunds.resume-pending', group: 'lifecycle', schedule: '*/5 * * * *' });
    t.true(jobHandlers.some((h) => h.definition === resumePendingRefundsJob));
    const intent = nextReference();
    const { payment } = await makePayment(c, {
      amount: '9.00',
      paymentMethod: 'provider_a',
      providerReference: intent,
    });
    provider.behave(intent, { actsThenFails: true, status: 500 });
    t.is((await refund(c, { paymentId: payment.id, amount: '9.00' })).status, 502);
    provider.behave(intent, {});
    const job = { jobId: 'resume-test', retryCount: 0 };
    t.deepEqual(
      await resumePendingRefundsHandler.run(app.deps, {}, job),
      { completed: 0, released: 0, left: 0 },
      'not yet ten minutes old',
    );
    await app
      .db('refunds')
      .where({ payment_id: payment.id })
      .update({ created_at: new Date(Date.now() - 11 * 60_000) });
    t.deepEqual(await resumePendingRefundsHandler.run(app.deps, {}, job), { completed: 1, released: 0, left: 0 });
    t.is(refundsAt(intent).length, 1);
    t.like(await readPayment(c, payment.id), { refundedAmount: '9.00', status: 'refunded' });
  },
);

test(
  'while the same refund is being asked for again (by another retry or the sweep), a retry is 409, not a second ' +
    'refund',
  async (t) => {
    const intent = nextReference();
    const { payment } = await makePayment(c, {
      amount: '100.00',
      paymentMethod: 'provider_a',
      providerReference: intent,
    });
    provider.behave(intent, { actsThenFails: true, status: 500 });
    t.is((await refund(c, { paymentId: payment.id, amount: '10.00' })).status, 502);
    // The reservation is a day old, and someone is asking provider_a for it again now.
    await app
      .db('refunds')
      .where({ payment_id: payment.id })
      .update({ created_at: new Date(Date.now() - 86_400_000), call_lease_until: new Date(Date.now() + 60_000) });
    provider.behave(intent, {});
    const retry = await refund(c, { paymentId: payment.id, amount: '10.00' });
    t.is(retry.status, 409);
    t.is(retry.body.error.code, 'request_in_progress');
    t.is(refundsAt(intent).length, 1);
    t.is((await rowsOf(payment.id)).length, 1);
    // Another amount is another refund.
    t.is((await refund(c, { paymentId: payment.id, amount: '11.00' })).status, 201);
  },
);
