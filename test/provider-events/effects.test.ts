import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { applyProviderEventHandler } from '../../src/provider-events/apply-event.handler.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import {
  hmacHex,
  postProviderA,
  postProviderB,
  postProviderC,
  PROVIDER_SECRETS,
  providerAEvent,
  providerBPaid,
  providerCEvent,
} from '../helpers/provider-events.ts';
import { adminCtx, makeInvoice, readInvoice, type Ctx } from '../payments/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { newSubscription } from './fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  // provider_b and provider_c mid-rotation: an old and a new secret configured together.
  app = await startTestApp({
    ...PROVIDER_SECRETS,
    PROVIDER_B_CALLBACK_TOKEN: `cbtoken_b_old,${PROVIDER_SECRETS.PROVIDER_B_CALLBACK_TOKEN}`,
    PROVIDER_C_WEBHOOK_SECRET: `${PROVIDER_SECRETS.PROVIDER_C_WEBHOOK_SECRET} , signing_c_old`,
  });
  c = await adminCtx(app);
  await registerWorkers(app.boss, app.deps, ['provider_events'], jobHandlers);
});
test.after.always(async () => app?.close());

type StoredRow = { id: string; status: string; failure_reason: string | null; attempts: number };
const row = (provider: string, eventId: string) => (): Promise<StoredRow | undefined> =>
  app.db('provider_events').where({ provider, event_id: eventId }).first();
const settled = (read: () => Promise<StoredRow | undefined>) =>
  waitFor(read, (r) => r !== undefined && r.status !== 'received');
const paymentsOf = (invoiceId: string) => app.db('payments').where({ invoice_id: invoiceId }).orderBy('created_at');
const creditsOf = (customerId: string) => app.db('credit_ledger').where({ customer_id: customerId, kind: 'credit' });
const digest = async (body: string) => (await import('node:crypto')).createHash('sha256').update(body).digest('hex');

test('provider_b and provider_c accept every configured secret of a rotation, and nothing else', async (t) => {
  const invoiceB = await makeInvoice(c, { unitPrice: '3.00' });
  const invoiceC = await makeInvoice(c, { unitPrice: '4.00' });
  const paidB = providerBPaid(invoiceB.id, '3.00', 'USD');
  t.is((await postProviderB(app.baseUrl, paidB, { secret: 'cbtoken_b_old' })).status, 200);
  const refusedB = await postProviderB(app.baseUrl, providerBPaid(invoiceB.id, '3.00', 'USD'), {
    secret: 'cbtoken_b_older',
  });
  t.is(refusedB.status, 400);
  t.is(refusedB.body.error.code, 'invalid_signature');
  const orderC = providerCEvent('order_created', { invoice_id: invoiceC.id }, { total: 400, currency: 'USD' });
  t.is((await postProviderC(app.baseUrl, orderC, { secret: 'signing_c_old' })).status, 200);
  const otherC = providerCEvent('order_created', { invoice_id: invoiceC.id }, { total: 400, currency: 'USD' });
  t.is((await postProviderC(app.baseUrl, otherC, { secret: 'signing_c_older' })).status, 400);
  t.is((await settled(row('provider_b', paidB.id)))!.status, 'processed');
  t.is((await settled(row('provider_c', await digest(JSON.stringify(orderC)))))!.status, 'processed');
  t.is((await readInvoice(c, invoiceB.id)).status, 'paid');
  t.is((await readInvoice(c, invoiceC.id)).status, 'paid');
  t.is(await row('provider_c', await digest(JSON.stringify(otherC)))(), undefined);
});

test('provider_a: a header with several v1 signatures verifies when one of them matches', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '6.00' });
  const event = providerAEvent.invoicePaid(invoice.id, 600, 'USD');
  const body = JSON.stringify(event);
  const ts = Math.floor(Date.now() / 1000);
  const ours = hmacHex(PROVIDER_SECRETS.PROVIDER_A_WEBHOOK_SECRET, `${ts}.${body}`);
  const header = `t=${ts},v1=${hmacHex('whsec_not_ours', `${ts}.${body}`)},v1=${ours}`;
  const res = await postProviderA(app.baseUrl, body, { header });
  t.is(res.status, 200, res.text);
  t.is((await settled(row('provider_a', event.id)))!.status, 'processed');
  // Signed near the edge of the tolerance (300 s; a few seconds left for a loaded machine) is still accepted.
  const edge = providerAEvent.invoicePaid(invoice.id, 600, 'USD');
  t.is((await postProviderA(app.baseUrl, edge, { timestamp: Math.floor(Date.now() / 1000) - 290 })).status, 200);
});

test('provider_b and provider_c: the same event posted 10 times concurrently is stored and paid once', async (t) => {
  const invoiceB = await makeInvoice(c, { unitPrice: '8.00' });
  const invoiceC = await makeInvoice(c, { unitPrice: '9.00' });
  const paidB = providerBPaid(invoiceB.id, '8.00', 'USD');
  const orderC = JSON.stringify(
    providerCEvent('subscription_payment_success', { invoice_id: invoiceC.id }, { total: 900, currency: 'USD' }),
  );
  const answers = await Promise.all([
    ...Array.from({ length: 10 }, () => postProviderB(app.baseUrl, paidB)),
    ...Array.from({ length: 10 }, () => postProviderC(app.baseUrl, orderC)),
  ]);
  t.deepEqual(
    answers.map((a) => a.status),
    Array(20).fill(200),
  );
  t.true(answers.every((a) => a.body.received === true));
  await settled(row('provider_b', paidB.id));
  await settled(row('provider_c', await digest(orderC)));
  t.is((await app.db('provider_events').where({ provider: 'provider_b', event_id: paidB.id })).length, 1);
  t.is((await paymentsOf(invoiceB.id)).length, 1);
  t.is((await paymentsOf(invoiceC.id)).length, 1);
  t.is((await readInvoice(c, invoiceC.id)).status, 'paid');
});

test('minor units follow the currency: provider_a 12345 BHD is 12.345, provider_c 1000 JPY is 1000', async (t) => {
  const bhd = await makeInvoice(c, { unitPrice: '12.345', currency: 'BHD' });
  const jpy = await makeInvoice(c, { unitPrice: '1000', currency: 'JPY' });
  const a = providerAEvent.checkoutCompleted(bhd.id, 12345, 'BHD');
  const cBody = JSON.stringify(
    providerCEvent('subscription_payment_success', { invoice_id: jpy.id }, { total: 1000, currency: 'JPY' }),
  );
  await postProviderA(app.baseUrl, a);
  await postProviderC(app.baseUrl, cBody);
  t.is((await settled(row('provider_a', a.id)))!.status, 'processed');
  t.is((await settled(row('provider_c', await digest(cBody))))!.status, 'processed');
  const [paidBhd] = await paymentsOf(bhd.id);
  const [paidJpy] = await paymentsOf(jpy.id);
  t.is(Number(paidBhd.amount), 12.345);
  t.is(Number(paidJpy.amount), 1000);
  t.is((await readInvoice(c, bhd.id)).status, 'paid');
  t.is((await readInvoice(c, jpy.id)).status, 'paid');
});

test(
  'a payment above the amount due pays the invoice and the rest becomes store credit, ' + 'once per provider payment',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '10.00' });
    const over = providerBPaid(invoice.id, '15.00', 'USD', 'pay_b_over_1');
    await postProviderB(app.baseUrl, over);
    t.is((await settled(row('provider_b', over.id)))!.status, 'processed');
    const payments = await paymentsOf(invoice.id);
    t.is(payments.length, 1);
    t.is(Number(payments[0].amount), 10);
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
    let credits = await creditsOf(invoice.customerId);
    t.is(credits.length, 1);
    t.is(Number(credits[0].amount), 5);
    t.regex(credits[0].description, /pay_b_over_1/);
    // The provider sends the same payment again under a new callback id: nothing more.
    const again = providerBPaid(invoice.id, '15.00', 'USD', 'pay_b_over_1');
    await postProviderB(app.baseUrl, again);
    t.is((await settled(row('provider_b', again.id)))!.status, 'processed');
    credits = await creditsOf(invoice.customerId);
    t.is(credits.length, 1);
    t.is((await paymentsOf(invoice.id)).length, 1);
    const ledger = await request(app.baseUrl, `/api/billing/credits?customerId=${invoice.customerId}`, {
      cookie: c.cookie,
    });
    t.is(ledger.status, 200, ledger.text);
    t.is(ledger.body.length, 1);
    t.like(ledger.body[0], { amount: '5.00', balanceAfter: '5.00' });
  },
);

test(
  'events naming no invoice, an id that cannot be ours, or an unknown status are failed with the reason and change ' +
    'nothing',
  async (t) => {
    const noInvoice = providerAEvent.invoicePaid('', 100, 'USD');
    const notAnId = providerBPaid('INV-2026-0001', '1.00', 'USD');
    const sub = await newSubscription(c);
    const badStatus = providerAEvent.subscriptionUpdated(sub.id, 'incomplete_expired');
    const unknownSub = providerAEvent.paymentFailed(
      (await makeInvoice(c, { unitPrice: '2.00' })).id,
      '00000000-0000-4000-8000-0000000000ff',
    );
    await postProviderA(app.baseUrl, noInvoice);
    await postProviderB(app.baseUrl, notAnId);
    await postProviderA(app.baseUrl, badStatus);
    await postProviderA(app.baseUrl, unknownSub);
    const reasons = await Promise.all(
      [
        row('provider_a', noInvoice.id),
        row('provider_b', notAnId.id),
        row('provider_a', badStatus.id),
        row('provider_a', unknownSub.id),
      ].map(settled),
    );
    t.deepEqual(
      reasons.map((r) => r!.status),
      ['failed', 'failed', 'failed', 'failed'],
    );
    t.regex(reasons[0]!.failure_reason!, /names no invoice/);
    t.regex(reasons[1]!.failure_reason!, /invoice INV-2026-0001 does not exist/);
    t.regex(reasons[2]!.failure_reason!, /unknown subscription status "incomplete_expired"/);
    t.regex(reasons[3]!.failure_reason!, /does not exist/);
    t.notRegex(reasons[3]!.failure_reason!, /insert into/i);
    t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'active');
    const listed = await request(app.baseUrl, '/api/billing/provider-events?status=failed&provider=provider_b', {
      cookie: c.cookie,
    });
    t.is(listed.status, 200);
    t.true(
      listed.body.some(
        (e: { eventId: string; status: string; provider: string }) =>
          e.eventId === notAnId.id && e.provider === 'provider_b',
      ),
    );
    t.true(
      listed.body.every(
        (e: { status: string; provider: string }) => e.status === 'failed' && e.provider === 'provider_b',
      ),
    );
  },
);

const statusOf = async (id: string) => (await app.db('subscriptions').where({ id }).first()).status as string;

test('status mapping: provider_c on_trial, paused, unpaid, expired; provider_a unpaid, paused, canceled', async (t) => {
  const subC = await newSubscription(c);
  const subA = await newSubscription(c);
  const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  const cSteps: [string, string][] = [
    ['on_trial', 'trialing'],
    ['paused', 'paused'],
    ['unpaid', 'past_due'],
    ['active', 'active'],
    ['expired', 'canceled'],
  ];
  for (const [i, [theirs, ours]] of cSteps.entries()) {
    const body = JSON.stringify(
      providerCEvent(
        i === 0 ? 'subscription_created' : 'subscription_updated',
        { subscription_id: subC.id },
        { status: theirs, updated_at: at(i) },
      ),
    );
    await postProviderC(app.baseUrl, body);
    t.is((await settled(row('provider_c', await digest(body))))!.status, 'processed', theirs);
    t.is(await statusOf(subC.id), ours, theirs);
  }
  const now = Math.floor(Date.now() / 1000);
  const aSteps: [string, string][] = [
    ['unpaid', 'past_due'],
    ['paused', 'paused'],
    ['trialing', 'trialing'],
    ['canceled', 'canceled'],
  ];
  for (const [i, [theirs, ours]] of aSteps.entries()) {
    const event = providerAEvent.subscriptionUpdated(subA.id, theirs, now + i);
    await postProviderA(app.baseUrl, event);
    await settled(row('provider_a', event.id));
    t.is(await statusOf(subA.id), ours, theirs);
  }
  const types = (await app.db('events').whereRaw("data->>'id' = ?", [subA.id]).orderBy('created_at')).map(
    (e) => e.type,
  );
  t.deepEqual(types, [
    'subscription.created',
    'subscription.updated',
    'subscription.updated',
    'subscription.updated',
    'subscription.canceled',
  ]);
});

test('reordered provider_c status events end on the newest, whatever order they arrive in', async (t) => {
  const sub = await newSubscription(c);
  const base = Date.now();
  const paused = JSON.stringify(
    providerCEvent(
      'subscription_updated',
      { subscription_id: sub.id },
      { status: 'paused', updated_at: new Date(base + 2000).toISOString() },
    ),
  );
  const pastDue = JSON.stringify(
    providerCEvent(
      'subscription_updated',
      { subscription_id: sub.id },
      { status: 'past_due', updated_at: new Date(base + 1000).toISOString() },
    ),
  );
  await postProviderC(app.baseUrl, paused);
  await settled(row('provider_c', await digest(paused)));
  await postProviderC(app.baseUrl, pastDue);
  t.is((await settled(row('provider_c', await digest(pastDue))))!.status, 'ignored');
  t.is(await statusOf(sub.id), 'paused');
});

test.serial(
  'a transient error is retried by the queue; after the last retry the event is failed, listed, and replays cleanly',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '11.00' });
    const event = providerAEvent.invoicePaid(invoice.id, 1100, 'USD');
    // Stored as the acknowledgement stores it, but not queued: this test plays the queue's attempts itself.
    const [stored] = await app
      .db('provider_events')
      .insert({ provider: 'provider_a', event_id: event.id, event_type: event.type, payload: JSON.stringify(event) })
      .returning('id');
    const attempt = async (retryCount: number) => {
      // Another transaction holds the invoice; the attempt waits for it and is then cancelled (a transient error).
      return app.db.transaction(async (holder) => {
        await holder('invoices').where({ id: invoice.id }).forUpdate().first();
        const holderPid = (await holder.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
        const running = applyProviderEventHandler.run(
          app.deps,
          { eventId: stored.id },
          { jobId: `test-${retryCount}`, retryCount },
        );
        // Only the backends this holder blocks: pg_stat_activity also shows the other test files' databases on the
        // server.
        const waiting = await waitFor(
          () => app.db.raw('select pid from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [holderPid]),
          (r) => r.rows.length > 0,
          5000,
        );
        t.is(waiting.rows.length, 1);
        await app.db.raw('select pg_cancel_backend(?)', [waiting.rows[0].pid]);
        return running.then(
          (value) => ({ value }),
          (error: Error) => ({ error }),
        );
      });
    };
    const early = await attempt(0);
    t.truthy('error' in early && early.error, 'an early attempt throws so pg-boss retries');
    let current = (await app.db('provider_events').where({ id: stored.id }).first()) as StoredRow;
    t.is(current.status, 'received');
    t.is(current.attempts, 0);
    const last = await attempt(10);
    t.false('error' in last);
    current = (await app.db('provider_events').where({ id: stored.id }).first()) as StoredRow;
    t.is(current.status, 'failed');
    t.regex(current.failure_reason!, /^gave up after 1 attempts: .*cancel/);
    t.is((await paymentsOf(invoice.id)).length, 0);
    const listed = await request(
      app.baseUrl,
      '/api/billing/provider-events?status=failed&provider=provider_a&limit=500',
      { cookie: c.cookie },
    );
    t.true(listed.body.some((e: { id: string }) => e.id === stored.id));
    const replay = await request(app.baseUrl, `/api/billing/provider-events/${stored.id}/replay`, {
      cookie: c.cookie,
      method: 'POST',
      body: {},
    });
    t.is(replay.status, 200, replay.text);
    t.like(replay.body, { id: stored.id, status: 'received', failureReason: null });
    const done = await waitFor(row('provider_a', event.id), (r) => r?.status === 'processed');
    t.is(done!.status, 'processed');
    t.is((await paymentsOf(invoice.id)).length, 1);
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
  },
);
