import { createHash } from 'node:crypto';
import test from 'ava';
import { applyProviderEventJob } from '../../src/provider-events/apply-event.job.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request, type Json } from '../helpers/http.ts';
import {
  hmacHex,
  postProviderA,
  postProviderB,
  postProviderC,
  PROVIDER_SECRETS,
  providerAEvent,
  providerASignature,
  providerBPaid,
  providerCEvent,
} from '../helpers/provider-events.ts';
import { waitFor, waitForJobsFinished } from '../helpers/wait.ts';
import { adminCtx, makeInvoice, readInvoice, type Ctx } from '../payments/fixtures.ts';
import { newSubscription } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  // Two provider_a secrets at once: the old one still verifies during a rotation.
  app = await startTestApp({
    ...PROVIDER_SECRETS,
    PROVIDER_A_WEBHOOK_SECRET: `whsec_a_old, ${PROVIDER_SECRETS.PROVIDER_A_WEBHOOK_SECRET}`,
  });
  c = await adminCtx(app);
  await registerWorkers(app.boss, app.deps, ['provider_events'], jobHandlers);
});
test.after.always(async () => app?.close());

type StoredRow = { id: string; status: string; failure_reason: string };
const settled = (eventRowId: () => Promise<StoredRow | undefined>) =>
  waitFor(eventRowId, (row) => row !== undefined && row.status !== 'received');
const storedEvent = (provider: string, eventId: string) => (): Promise<StoredRow | undefined> =>
  app.db('provider_events').where({ provider, event_id: eventId }).first();
const paymentsOf = (invoiceId: string) => app.db('payments').where({ invoice_id: invoiceId });
const countRows = async (table: string) => Number((await app.db(table).count('* as n'))[0]!.n);

test('provider_a checkout.session.completed: 200 at once, then one payment and the invoice paid', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '49.99' });
  const event = providerAEvent.checkoutCompleted(invoice.id, 4999, 'USD');
  const res = await postProviderA(app.baseUrl, event);
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { received: true });
  const row = await settled(storedEvent('provider_a', event.id));
  t.is(row!.status, 'processed');
  const payments = await paymentsOf(invoice.id);
  t.is(payments.length, 1);
  t.is(payments[0].payment_method, 'provider_a');
  t.is(payments[0].provider_reference, event.data.object.payment_intent);
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
});

test('the same event posted 10 times concurrently: one stored row, one payment', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  const event = providerAEvent.invoicePaid(invoice.id, 1000, 'USD');
  const answers = await Promise.all(Array.from({ length: 10 }, () => postProviderA(app.baseUrl, event)));
  t.deepEqual(
    answers.map((a) => a.status),
    Array(10).fill(200),
  );
  await settled(storedEvent('provider_a', event.id));
  t.is((await app.db('provider_events').where({ event_id: event.id })).length, 1);
  t.is((await paymentsOf(invoice.id)).length, 1);
});

test('two different events carrying the same payment record it once', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  const first = providerAEvent.checkoutCompleted(invoice.id, 1000, 'USD', 'pi_shared_1');
  const second = providerAEvent.invoicePaid(invoice.id, 1000, 'USD', 'pi_shared_1');
  await postProviderA(app.baseUrl, first);
  await postProviderA(app.baseUrl, second);
  await settled(storedEvent('provider_a', first.id));
  await settled(storedEvent('provider_a', second.id));
  t.is((await paymentsOf(invoice.id)).length, 1);
  t.is((await app.db('provider_credits').where({ provider_reference: 'pi_shared_1' })).length, 0);
});

test.serial(
  'refused with 400 invalid_signature and nothing stored: other body, 301 s old, 330 s ahead, wrong secret, ' +
    'missing, malformed',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '5.00' });
    const event = providerAEvent.invoicePaid(invoice.id, 500, 'USD');
    const body = JSON.stringify(event);
    const other = JSON.stringify({ ...event, id: 'evt_other' });
    const now = Math.floor(Date.now() / 1000);
    const before = await countRows('provider_events');
    const cases: [string, Promise<{ status: number; body: Json }>][] = [
      [
        'signature of the right secret over another body',
        postProviderA(app.baseUrl, body, {
          header: providerASignature(PROVIDER_SECRETS.PROVIDER_A_WEBHOOK_SECRET, other, now),
        }),
      ],
      ['timestamp 301 s old', postProviderA(app.baseUrl, body, { timestamp: now - 301 })],
      // Ahead by more than the tolerance plus any delay a loaded machine adds before the server reads its clock.
      ['timestamp 330 s ahead', postProviderA(app.baseUrl, body, { timestamp: now + 330 })],
      ['wrong secret', postProviderA(app.baseUrl, body, { secret: 'whsec_wrong' })],
      ['no header', postProviderA(app.baseUrl, body, { header: null })],
      ['malformed header', postProviderA(app.baseUrl, body, { header: 'v1=abc' })],
      ['empty v1', postProviderA(app.baseUrl, body, { header: `t=${now},v1=` })],
      [
        'provider_b wrong token',
        postProviderB(app.baseUrl, providerBPaid(invoice.id, '5.00', 'USD'), { secret: 'nope' }),
      ],
      ['provider_b no token', postProviderB(app.baseUrl, providerBPaid(invoice.id, '5.00', 'USD'), { header: null })],
      [
        'provider_c wrong signature',
        postProviderC(
          app.baseUrl,
          providerCEvent('order_created', { invoice_id: invoice.id }, { total: 500, currency: 'USD' }),
          { secret: 'nope' },
        ),
      ],
      [
        'provider_c no signature',
        postProviderC(
          app.baseUrl,
          providerCEvent('order_created', { invoice_id: invoice.id }, { total: 500, currency: 'USD' }),
          { header: null },
        ),
      ],
    ];
    for (const [name, pending] of cases) {
      const res = await pending;
      t.is(res.status, 400, name);
      t.is(res.body.error.code, 'invalid_signature', name);
    }
    t.is(await countRows('provider_events'), before);
    t.is((await paymentsOf(invoice.id)).length, 0);
  },
);

test('the old secret of a rotation still verifies', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '7.00' });
  const event = providerAEvent.invoicePaid(invoice.id, 700, 'USD');
  t.is((await postProviderA(app.baseUrl, event, { secret: 'whsec_a_old' })).status, 200);
  await settled(storedEvent('provider_a', event.id));
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
});

test.serial('a signed body that is not an event is 400 invalid_request and nothing is stored', async (t) => {
  const before = await countRows('provider_events');
  const notJson = await postProviderA(app.baseUrl, 'not json at all');
  t.is(notJson.status, 400);
  t.is(notJson.body.error.code, 'invalid_request');
  const noId = await postProviderA(app.baseUrl, { type: 'invoice.paid' });
  t.is(noId.status, 400);
  t.is(await countRows('provider_events'), before);
});

test('unknown event types are stored and ignored', async (t) => {
  const event = {
    id: 'evt_unknown_type_1',
    type: 'charge.dispute.created',
    created: Math.floor(Date.now() / 1000),
    data: { object: {} },
  };
  t.is((await postProviderA(app.baseUrl, event)).status, 200);
  const row = await settled(storedEvent('provider_a', event.id));
  t.is(row!.status, 'ignored');
});

test('provider_b invoices.paid records a payment on external_id; invoices.expired is recorded only', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '150000', currency: 'IDR' });
  const paid = providerBPaid(invoice.id, '150000', 'IDR');
  t.is((await postProviderB(app.baseUrl, paid)).status, 200);
  t.is((await settled(storedEvent('provider_b', paid.id)))!.status, 'processed');
  const payments = await paymentsOf(invoice.id);
  t.is(payments.length, 1);
  t.is(payments[0].provider_reference, paid.data.id);
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
  const other = await makeInvoice(c, { unitPrice: '10.00' });
  const expired = {
    id: 'cb_expired_1',
    event: 'invoices.expired',
    data: { id: 'inv_b_1', external_id: other.id, amount: '10.00', currency: 'USD', status: 'EXPIRED' },
  };
  t.is((await postProviderB(app.baseUrl, expired)).status, 200);
  t.is((await settled(storedEvent('provider_b', expired.id)))!.status, 'ignored');
  t.is((await readInvoice(c, other.id)).status, 'issued');
});

test(
  'provider_c order_created records a payment (cents); the event id is the body digest, so a resend is a ' +
    'duplicate',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '12.50' });
    const event = providerCEvent('order_created', { invoice_id: invoice.id }, { total: 1250, currency: 'USD' });
    const body = JSON.stringify(event);
    t.is((await postProviderC(app.baseUrl, body)).status, 200);
    t.is((await postProviderC(app.baseUrl, body)).status, 200);
    const digest = (await import('node:crypto')).createHash('sha256').update(body).digest('hex');
    t.is((await settled(storedEvent('provider_c', digest)))!.status, 'processed');
    t.is((await app.db('provider_events').where({ provider: 'provider_c', event_id: digest })).length, 1);
    t.is((await paymentsOf(invoice.id)).length, 1);
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
    t.is(hmacHex('k', 'x').length, 64);
  },
);

test('a payment for an already paid invoice becomes store credit, once, even when replayed', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '20.00' });
  const first = providerAEvent.invoicePaid(invoice.id, 2000, 'USD');
  await postProviderA(app.baseUrl, first);
  await settled(storedEvent('provider_a', first.id));
  const late = providerAEvent.checkoutCompleted(invoice.id, 2000, 'USD', 'pi_late_double');
  await postProviderA(app.baseUrl, late);
  const row = await settled(storedEvent('provider_a', late.id));
  t.is(row!.status, 'processed');
  const credits = await app.db('credit_ledger').where({ customer_id: invoice.customerId, kind: 'credit' });
  t.is(credits.length, 1);
  t.is(Number(credits[0].amount), 20);
  // Replaying the processed event changes nothing.
  const replay = await request(app.baseUrl, `/api/billing/provider-events/${row!.id}/replay`, {
    cookie: c.cookie,
    method: 'POST',
    body: {},
  });
  t.is(replay.status, 200, replay.text);
  // Whatever the replay queued has run.
  await waitForJobsFinished(app.db, applyProviderEventJob.name, { eventId: row!.id });
  t.is((await storedEvent('provider_a', late.id)())!.status, 'processed');
  t.is((await app.db('credit_ledger').where({ customer_id: invoice.customerId, kind: 'credit' })).length, 1);
  t.is((await paymentsOf(invoice.id)).length, 1);
});

test('an unknown invoice: kept as failed with its reason, listed, and replayed once the cause is fixed', async (t) => {
  const missing = '00000000-0000-4000-8000-00000000abcd';
  const event = providerAEvent.invoicePaid(missing, 1000, 'USD');
  await postProviderA(app.baseUrl, event);
  const row = await settled(storedEvent('provider_a', event.id));
  t.is(row!.status, 'failed');
  t.regex(row!.failure_reason, /does not exist/);
  const list = await request(app.baseUrl, '/api/billing/provider-events?status=failed&provider=provider_a', {
    cookie: c.cookie,
  });
  t.is(list.status, 200);
  t.true(
    list.body.some(
      (e: { id: string; failureReason: string }) => e.id === row!.id && /does not exist/.test(e.failureReason),
    ),
  );
  // Create the invoice under that id (as an import would), then replay.
  const customer = await insertCustomer(app.db);
  await app.db('invoices').insert({
    id: missing,
    customer_id: customer.id,
    invoice_number: 'INV-IMPORT-1',
    status: 'issued',
    currency: 'USD',
    tax_rate: '0',
    subtotal: '10',
    tax_amount: '0',
    total: '10',
    issued_at: new Date(),
  });
  const replay = await request(app.baseUrl, `/api/billing/provider-events/${row!.id}/replay`, {
    cookie: c.cookie,
    method: 'POST',
    body: {},
  });
  t.is(replay.status, 200, replay.text);
  const after = await waitFor(storedEvent('provider_a', event.id), (r) => r?.status === 'processed');
  t.is(after!.status, 'processed');
  t.is((await paymentsOf(missing)).length, 1);
  t.is(
    (
      await request(app.baseUrl, `/api/billing/provider-events/00000000-0000-4000-8000-000000000000/replay`, {
        cookie: c.cookie,
        method: 'POST',
        body: {},
      })
    ).status,
    404,
  );
});

test('a currency that is not the invoice currency is failed with the reason, nothing recorded', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  const event = providerAEvent.invoicePaid(invoice.id, 1000, 'EUR');
  await postProviderA(app.baseUrl, event);
  const row = await settled(storedEvent('provider_a', event.id));
  t.is(row!.status, 'failed');
  t.regex(row!.failure_reason, /EUR/);
  t.is((await paymentsOf(invoice.id)).length, 0);
});

test(
  'subscription status events map onto ours; ' + 'an older event arriving later changes nothing; canceled is final',
  async (t) => {
    const sub = await newSubscription(c);
    const now = Math.floor(Date.now() / 1000);
    const newer = providerAEvent.subscriptionUpdated(sub.id, 'past_due', now);
    const older = providerAEvent.subscriptionUpdated(sub.id, 'active', now - 60);
    await postProviderA(app.baseUrl, newer);
    await settled(storedEvent('provider_a', newer.id));
    await postProviderA(app.baseUrl, older);
    t.is((await settled(storedEvent('provider_a', older.id)))!.status, 'ignored');
    t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'past_due');

    const cancelled = providerCEvent(
      'subscription_updated',
      { subscription_id: sub.id },
      { status: 'cancelled', updated_at: new Date(Date.now() + 1000).toISOString() },
    );
    await postProviderC(app.baseUrl, cancelled);
    await waitFor(
      () => app.db('subscriptions').where({ id: sub.id }).first(),
      (s) => s.status === 'canceled',
    );
    const revive = providerCEvent(
      'subscription_updated',
      { subscription_id: sub.id },
      { status: 'active', updated_at: new Date(Date.now() + 5000).toISOString() },
    );
    const reviveBody = JSON.stringify(revive);
    await postProviderC(app.baseUrl, reviveBody);
    // provider_c's events carry no id: the body's digest is the one stored.
    const revived = await settled(storedEvent('provider_c', createHash('sha256').update(reviveBody).digest('hex')));
    t.not(revived?.status ?? 'received', 'received', 'the revive was applied');
    t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'canceled');
    const types = (await app.db('events').whereRaw("data->>'id' = ?", [sub.id]).orderBy('created_at')).map(
      (e) => e.type,
    );
    t.deepEqual(types, ['subscription.created', 'subscription.updated', 'subscription.canceled']);
  },
);

test(
  'provider_a invoice.payment_failed: ' + 'payment.failed, the subscription past_due, dunning.started once',
  async (t) => {
    const sub = await newSubscription(c);
    const invoice = await app.db('invoices').where({ subscription_id: sub.id }).first();
    const first = providerAEvent.paymentFailed(invoice.id, sub.id);
    const second = providerAEvent.paymentFailed(invoice.id, sub.id);
    await postProviderA(app.baseUrl, first);
    await settled(storedEvent('provider_a', first.id));
    await postProviderA(app.baseUrl, second);
    await settled(storedEvent('provider_a', second.id));
    t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'past_due');
    const events = await app.db('events').whereRaw("data->>'invoiceId' = ?", [invoice.id]).orderBy('created_at');
    t.deepEqual(
      events.map((e) => e.type).filter((x) => x.startsWith('payment') || x.startsWith('dunning')),
      ['payment.failed', 'dunning.started', 'payment.failed'],
    );
    const started = events.find((e) => e.type === 'dunning.started')!;
    t.like(started.data, { invoiceId: invoice.id, subscriptionId: sub.id, attempt: 1 });
    t.truthy(started.data.nextAttemptAt);
    // Paying the invoice resolves dunning and reactivates.
    await postProviderA(app.baseUrl, providerAEvent.invoicePaid(invoice.id, 3000, 'USD'));
    await waitFor(
      () => app.db('subscriptions').where({ id: sub.id }).first(),
      (s) => s.status === 'active',
    );
    t.truthy(
      await app
        .db('events')
        .where({ type: 'dunning.resolved' })
        .whereRaw("data->>'invoiceId' = ?", [invoice.id])
        .first(),
    );
  },
);

test('provider event list needs an admin session', async (t) => {
  t.is((await request(app.baseUrl, '/api/billing/provider-events')).status, 401);
});
