/** Auto-charge and dunning through the sweep against the fake provider_a (D-82, D-83). */
import test from 'ava';
import { autoChargeDueInvoices, retryDunning } from '../../src/dunning/charge.ts';
import { recordPaymentFailure } from '../../src/dunning/service.ts';
import { inTransaction } from '../../src/db/knex.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { startFakeProviders, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request } from '../helpers/http.ts';
import { waitUntilBlocked } from '../helpers/wait.ts';
import { cron, CRON_SECRET } from '../lifecycle/fixtures.ts';
import { makeInvoice } from '../payments/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';

let app: TestApp;
let fake: FakeProviderA;
let cookie: string;
const T0 = Date.now();
const after = (days: number, minutes = 1) => new Date(T0 + days * 86_400_000 + minutes * 60_000).toISOString();

test.before(async () => {
  fake = await startFakeProviders();
  app = await startTestApp({ CRON_SECRET, PROVIDER_A_API_URL: fake.url, PROVIDER_A_SECRET_KEY: fake.secretKey });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
});
test.after.always(async () => {
  await app?.close();
  await fake?.close();
});

/** A monthly subscription (its first invoice issued now) of a customer whose default method is `method`. */
async function subscribed(method: string, price = '25.00') {
  const customer = await insertCustomer(app.db);
  const pm = await request(app.baseUrl, '/api/billing/payment-methods', {
    cookie,
    body: { customerId: customer.id, type: 'provider_a', providerMethodId: method, isDefault: true },
  });
  if (pm.status !== 201) throw new Error(pm.text);
  const plan = await makePlan(app.db, price);
  const sub = await request(app.baseUrl, '/api/billing/subscriptions', {
    cookie,
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
  });
  if (sub.status !== 201) throw new Error(sub.text);
  const invoice = await app.db('invoices').where({ subscription_id: sub.body.id }).first();
  return { customerId: customer.id, subscriptionId: sub.body.id as string, invoiceId: invoice.id as string };
}

async function sweep(asOf: string) {
  const res = await cron(app, { asOf, wait: true });
  if (res.status !== 200) throw new Error(`sweep ${asOf}: ${res.status} ${res.text}`);
  return res.body;
}

const subStatus = async (id: string) => (await app.db('subscriptions').where({ id }).first()).status;
const invoiceStatus = async (id: string) => (await app.db('invoices').where({ id }).first()).status;
const eventTypes = async (invoiceId: string) =>
  (await app.db('events').whereRaw("data->>'invoiceId' = ?", [invoiceId]).orderBy('created_at'))
    .map((e) => e.type)
    .filter((x) => /^(payment|dunning)\./.test(x));
const chargesOf = (method: string) =>
  fake.requests.filter((r) => r.path === '/v1/payment_intents' && r.form.payment_method === method);

test.serial(
  'a year of dunning in one week: success at once, decline then resolve on the schedule, all declines cancel',
  async (t) => {
    const ok = await subscribed('pm_ok_1');
    const recovering = await subscribed('pm_recovering_1');
    fake.script('pm_recovering_1', ['decline', 'decline', 'succeed']);
    const doomed = await subscribed('pm_card_decline_1');

    const first = await sweep(after(0));
    t.like(first, { charged: 1, chargeFailures: 2, dunningStarted: 2, dunning: 0 });
    t.is(await invoiceStatus(ok.invoiceId), 'paid');
    t.deepEqual(await eventTypes(ok.invoiceId), ['payment.succeeded']);
    t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_ok_1').length, 1);
    t.is(fake.charges.find((c) => c.paymentMethod === 'pm_ok_1')!.amount, '2500');
    for (const s of [recovering, doomed]) {
      t.is(await subStatus(s.subscriptionId), 'past_due');
      t.deepEqual(await eventTypes(s.invoiceId), ['payment.failed', 'dunning.started']);
    }
    const started = await app
      .db('events')
      .where({ type: 'dunning.started' })
      .whereRaw("data->>'invoiceId' = ?", [doomed.invoiceId])
      .first();
    t.like(started.data, {
      invoiceId: doomed.invoiceId,
      subscriptionId: doomed.subscriptionId,
      customerId: doomed.customerId,
      attempt: 1,
    });
    t.is(started.data.nextAttemptAt, new Date(Date.parse(after(0)) + 86_400_000).toISOString());

    // Before the first retry day nothing is charged again.
    const early = await sweep(after(0, 12 * 60));
    t.like(early, { charged: 0, chargeFailures: 0, dunning: 0 });
    t.is(chargesOf('pm_card_decline_1').length, 1);

    const day1 = await sweep(after(1, 2));
    t.like(day1, { dunning: 2, chargeFailures: 2, charged: 0 });
    const day3 = await sweep(after(3, 3));
    t.like(day3, { dunning: 2, charged: 1, chargeFailures: 1, dunningResolved: 1 });
    t.is(await invoiceStatus(recovering.invoiceId), 'paid');
    t.is(await subStatus(recovering.subscriptionId), 'active');
    t.deepEqual(await eventTypes(recovering.invoiceId), [
      'payment.failed',
      'dunning.started',
      'payment.failed',
      'payment.succeeded',
      'dunning.resolved',
    ]);

    await sweep(after(5, 4));
    t.is(await subStatus(doomed.subscriptionId), 'past_due');
    const day7 = await sweep(after(7, 5));
    t.like(day7, { dunning: 1, dunningFailed: 1, chargeFailures: 1 });
    t.is(await subStatus(doomed.subscriptionId), 'canceled');
    t.is(chargesOf('pm_card_decline_1').length, 5, 'the first charge and four retries');
    const types = await eventTypes(doomed.invoiceId);
    t.is(types.filter((x) => x === 'payment.failed').length, 5);
    t.is(types.at(-1), 'dunning.failed');
    t.is(await invoiceStatus(doomed.invoiceId), 'issued');

    // Nothing is charged again once dunning has ended.
    await sweep(after(9, 6));
    t.is(chargesOf('pm_card_decline_1').length, 5);
  },
);

test.serial('leave_past_due: after the last failure the subscription stays past_due', async (t) => {
  const put = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie,
    body: { 'billing.dunning_final_action': 'leave_past_due', 'billing.dunning_schedule_days': [1] },
  });
  t.is(put.status, 200, put.text);
  try {
    const s = await subscribed('pm_card_decline_2');
    await sweep(after(10));
    const ended = await sweep(after(11, 2));
    t.like(ended, { dunningFailed: 1 });
    t.is(await subStatus(s.subscriptionId), 'past_due');
    t.is((await eventTypes(s.invoiceId)).at(-1), 'dunning.failed');
  } finally {
    await request(app.baseUrl, '/api/settings', {
      method: 'PUT',
      cookie,
      body: { 'billing.dunning_final_action': 'cancel', 'billing.dunning_schedule_days': [1, 3, 5, 7] },
    });
  }
});

test.serial('two auto-charges at once charge an invoice once', async (t) => {
  const s = await subscribed('pm_ok_concurrent');
  const [a, b] = await Promise.all([
    autoChargeDueInvoices(app.deps, new Date()),
    autoChargeDueInvoices(app.deps, new Date()),
  ]);
  t.is(a.charged + b.charged, 1);
  t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_ok_concurrent').length, 1);
  t.is((await app.db('payments').where({ invoice_id: s.invoiceId })).length, 1);
  t.is(await invoiceStatus(s.invoiceId), 'paid');
});

test.serial(
  'an unknown outcome (timeout) leaves the attempt pending; the next run re-sends the same key and the provider ' +
    'charges once',
  async (t) => {
    const s = await subscribed('pm_slow');
    fake.behave('pm_slow', { delayMs: 400 });
    const first = await autoChargeDueInvoices(app.deps, new Date(), { timeoutMs: 100 });
    t.like(first, { charged: 0, chargeFailures: 0 });
    const attempt = await app.db('charge_attempts').where({ invoice_id: s.invoiceId }).first();
    t.is(attempt.status, 'pending');
    await new Promise((r) => setTimeout(r, 600)); // the provider finished the charge meanwhile
    fake.behave('pm_slow', {});
    const second = await autoChargeDueInvoices(app.deps, new Date());
    t.is(second.charged, 1);
    const sent = chargesOf('pm_slow');
    t.is(sent.length, 2);
    t.is(sent[0]!.headers['idempotency-key'], sent[1]!.headers['idempotency-key']);
    t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_slow').length, 1);
    t.is((await app.db('payments').where({ invoice_id: s.invoiceId })).length, 1);
    t.is(await invoiceStatus(s.invoiceId), 'paid');
  },
);

test.serial('a provider 500 is an unknown outcome too: no dunning, retried with the same key', async (t) => {
  const s = await subscribed('pm_flaky_500');
  fake.behave('pm_flaky_500', { status: 500, body: { error: { type: 'api_error', message: 'boom' } } });
  t.like(await autoChargeDueInvoices(app.deps, new Date()), { charged: 0, chargeFailures: 0, dunningStarted: 0 });
  t.is(await subStatus(s.subscriptionId), 'active');
  t.deepEqual(await eventTypes(s.invoiceId), []);
  fake.behave('pm_flaky_500', {});
  t.like(await autoChargeDueInvoices(app.deps, new Date()), { charged: 1 });
  const attempts = await app.db('charge_attempts').where({ invoice_id: s.invoiceId });
  t.is(attempts.length, 1);
  t.is(attempts[0].status, 'succeeded');
  t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_flaky_500').length, 1);
  t.is(await invoiceStatus(s.invoiceId), 'paid');
});

const DAY = 86_400_000;

test.serial(
  'voiding an invoice in dunning ends the case at once and reactivates; its retry day charges nothing',
  async (t) => {
    const s = await subscribed('pm_card_decline_void');
    const now = Date.now();
    t.like(await autoChargeDueInvoices(app.deps, new Date(now)), { chargeFailures: 1, dunningStarted: 1 });
    t.is(await subStatus(s.subscriptionId), 'past_due');
    const voided = await request(app.baseUrl, `/api/billing/invoices/${s.invoiceId}`, {
      method: 'PUT',
      cookie,
      body: { status: 'void' },
    });
    t.is(voided.status, 200, voided.text);
    t.is(await subStatus(s.subscriptionId), 'active');
    t.like(await retryDunning(app.deps, new Date(now + DAY + 60_000)), {
      dunning: 0,
      dunningResolved: 0,
      dunningFailed: 0,
      charged: 0,
      chargeFailures: 0,
    });
    t.is(chargesOf('pm_card_decline_void').length, 1, 'only the first charge: nothing is charged for a void invoice');
    t.is(await subStatus(s.subscriptionId), 'active');
    t.is((await eventTypes(s.invoiceId)).at(-1), 'dunning.resolved');
    t.is((await app.db('dunning_cases').where({ invoice_id: s.invoiceId }).first()).status, 'resolved');
  },
);

test.serial(
  'a provider-reported failure: dunning starts once per invoice, also without a subscription; once ended, the ' +
    'invoice gets no first auto-charge',
  async (t) => {
    const put = await request(app.baseUrl, '/api/settings', {
      method: 'PUT',
      cookie,
      body: { 'billing.dunning_schedule_days': [1] },
    });
    t.is(put.status, 200, put.text);
    try {
      const invoice = await makeInvoice({ baseUrl: app.baseUrl, cookie, db: app.db }, { unitPrice: '40.00' });
      const now = new Date();
      const report = () =>
        inTransaction(app.db, (trx) =>
          recordPaymentFailure(trx, {
            invoiceId: invoice.id,
            paymentMethod: 'provider_a',
            failureReason: 'card_declined',
            now,
          }),
        );
      t.deepEqual(await report(), { dunningStarted: true });
      t.deepEqual(await report(), { dunningStarted: false });
      t.deepEqual(await eventTypes(invoice.id), ['payment.failed', 'dunning.started', 'payment.failed']);
      const failed = await app
        .db('events')
        .where({ type: 'payment.failed' })
        .whereRaw("data->>'invoiceId' = ?", [invoice.id])
        .first();
      t.deepEqual(failed.data, {
        paymentId: null,
        invoiceId: invoice.id,
        customerId: invoice.customerId,
        amount: '40.00',
        currency: 'USD',
        paymentMethod: 'provider_a',
        failureReason: 'card_declined',
      });
      const started = await app
        .db('events')
        .where({ type: 'dunning.started' })
        .whereRaw("data->>'invoiceId' = ?", [invoice.id])
        .first();
      t.deepEqual(started.data, {
        invoiceId: invoice.id,
        subscriptionId: null,
        customerId: invoice.customerId,
        attempt: 1,
        nextAttemptAt: new Date(now.getTime() + DAY).toISOString(),
      });

      // Nothing is due before the day; on it the retry fails for want of a method, and the schedule is spent.
      t.like(await retryDunning(app.deps, new Date(now.getTime() + DAY - 60_000)), { dunning: 0 });
      t.like(await retryDunning(app.deps, new Date(now.getTime() + DAY + 60_000)), {
        dunning: 1,
        dunningFailed: 1,
        charged: 0,
      });
      t.is((await eventTypes(invoice.id)).at(-1), 'dunning.failed');

      const pm = await request(app.baseUrl, '/api/billing/payment-methods', {
        cookie,
        body: {
          customerId: invoice.customerId,
          type: 'provider_a',
          providerMethodId: 'pm_ok_after_dunning',
          isDefault: true,
        },
      });
      t.is(pm.status, 201, pm.text);
      t.like(await autoChargeDueInvoices(app.deps, new Date(now.getTime() + 2 * DAY)), {
        charged: 0,
        chargeFailures: 0,
      });
      t.is(chargesOf('pm_ok_after_dunning').length, 0);
      t.is(await invoiceStatus(invoice.id), 'issued');
    } finally {
      await request(app.baseUrl, '/api/settings', {
        method: 'PUT',
        cookie,
        body: { 'billing.dunning_schedule_days': [1, 3, 5, 7] },
      });
    }
  },
);

test.serial(
  'a manual payment or a credit note paying an invoice in dunning resolves the case at once and reactivates; its ' +
    'retry day charges nothing',
  async (t) => {
    const byPayment = await subscribed('pm_card_decline_manual');
    const byNote = await subscribed('pm_card_decline_note');
    const now = Date.now();
    await autoChargeDueInvoices(app.deps, new Date(now));
    for (const s of [byPayment, byNote]) t.is(await subStatus(s.subscriptionId), 'past_due');

    const paid = await request(app.baseUrl, '/api/billing/payments', {
      cookie,
      body: { invoiceId: byPayment.invoiceId, amount: '25.00', paymentMethod: 'bank_transfer' },
    });
    t.is(paid.status, 201, paid.text);
    const noted = await request(app.baseUrl, '/api/billing/credit-notes', {
      cookie,
      body: { invoiceId: byNote.invoiceId, amount: '25.00', reason: 'goodwill' },
    });
    t.is(noted.status, 201, noted.text);

    for (const s of [byPayment, byNote]) {
      t.is(await invoiceStatus(s.invoiceId), 'paid');
      t.is(await subStatus(s.subscriptionId), 'active');
      t.is((await eventTypes(s.invoiceId)).at(-1), 'dunning.resolved');
      const resolved = await app
        .db('events')
        .where({ type: 'dunning.resolved' })
        .whereRaw("data->>'invoiceId' = ?", [s.invoiceId])
        .first();
      t.like(resolved.data, {
        invoiceId: s.invoiceId,
        subscriptionId: s.subscriptionId,
        customerId: s.customerId,
        attempt: 1,
        nextAttemptAt: null,
      });
      t.is((await app.db('dunning_cases').where({ invoice_id: s.invoiceId }).first()).status, 'resolved');
    }
    await retryDunning(app.deps, new Date(now + 8 * DAY));
    t.is(chargesOf('pm_card_decline_manual').length, 1);
    t.is(chargesOf('pm_card_decline_note').length, 1);
  },
);

test.serial(
  'a connection reset during a charge is an unknown outcome: no dunning step, and the same key is sent again',
  async (t) => {
    const s = await subscribed('pm_reset');
    fake.behave('pm_reset', { reset: true });
    t.like(await autoChargeDueInvoices(app.deps, new Date()), { charged: 0, chargeFailures: 0, dunningStarted: 0 });
    t.is((await app.db('charge_attempts').where({ invoice_id: s.invoiceId }).first()).status, 'pending');
    t.is(await subStatus(s.subscriptionId), 'active');
    t.deepEqual(await eventTypes(s.invoiceId), []);
    fake.behave('pm_reset', {});
    t.like(await autoChargeDueInvoices(app.deps, new Date()), { charged: 1 });
    const sent = chargesOf('pm_reset');
    t.is(sent.length, 2);
    t.is(sent[0]!.headers['idempotency-key'], sent[1]!.headers['idempotency-key']);
    t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_reset').length, 1);
    t.is(await invoiceStatus(s.invoiceId), 'paid');
  },
);

test.serial(
  'killed after the provider charged but before the result was recorded: the next sweep re-sends the key and ' +
    'records the one charge',
  async (t) => {
    const s = await subscribed('pm_crash');
    const invoice = await app.db('invoices').where({ id: s.invoiceId }).first();
    const key = `charge_${s.invoiceId}_1`;
    // What the killed process did: its pending attempt was committed, and provider_a charged under its key.
    await app.db('charge_attempts').insert({
      invoice_id: s.invoiceId,
      attempt: 1,
      idempotency_key: key,
      amount: invoice.total,
      currency: invoice.currency,
      provider_method_id: 'pm_crash',
    });
    const direct = await fetch(`${fake.url}/v1/payment_intents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fake.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': key,
      },
      body: new URLSearchParams({
        amount: '2500',
        currency: 'usd',
        payment_method: 'pm_crash',
        off_session: 'true',
        confirm: 'true',
        'metadata[invoiceId]': s.invoiceId,
      }),
    });
    t.is(direct.status, 200);
    const intent = (await direct.json()) as { id: string };

    const [a, b] = await Promise.all([
      autoChargeDueInvoices(app.deps, new Date()),
      autoChargeDueInvoices(app.deps, new Date()),
    ]);
    t.is(a.charged + b.charged, 1);
    t.is(fake.charges.filter((c) => c.paymentMethod === 'pm_crash').length, 1, 'the provider charged once');
    const payments = await app.db('payments').where({ invoice_id: s.invoiceId });
    t.is(payments.length, 1);
    t.like(payments[0], { payment_method: 'provider_a', provider_reference: intent.id });
    t.is((await app.db('charge_attempts').where({ invoice_id: s.invoiceId })).length, 1);
    t.is(await invoiceStatus(s.invoiceId), 'paid');
  },
);

test.serial(
  'killed after the attempt was committed but before provider_a heard of it, then paid by hand: the next sweep ' +
    'cancels the attempt and charges nothing',
  async (t) => {
    const s = await subscribed('pm_crash_then_paid');
    const invoice = await app.db('invoices').where({ id: s.invoiceId }).first();
    // What the killed process left: a pending attempt that never reached provider_a.
    await app.db('charge_attempts').insert({
      invoice_id: s.invoiceId,
      attempt: 1,
      idempotency_key: `charge_${s.invoiceId}_1`,
      amount: invoice.total,
      currency: invoice.currency,
      provider_method_id: 'pm_crash_then_paid',
    });
    const paid = await request(app.baseUrl, '/api/billing/payments', {
      cookie,
      body: { invoiceId: s.invoiceId, amount: invoice.total, paymentMethod: 'bank_transfer' },
    });
    t.is(paid.status, 201, paid.text);

    const result = await autoChargeDueInvoices(app.deps, new Date());
    t.is(result.charged, 0);
    t.is(chargesOf('pm_crash_then_paid').length, 0, 'nothing was sent to provider_a');
    t.like(await app.db('charge_attempts').where({ invoice_id: s.invoiceId }).first(), {
      status: 'canceled',
      failure_reason: 'not sent: the invoice has nothing due',
    });
    t.is((await app.db('payments').where({ invoice_id: s.invoiceId })).length, 1);
    t.is(
      Number((await app.db('credit_ledger').where({ customer_id: s.customerId }).count({ n: '*' }))[0]!.n),
      0,
      'no store credit',
    );
    // Nothing is left pending to be sent by a later sweep either.
    await autoChargeDueInvoices(app.deps, new Date());
    t.is(chargesOf('pm_crash_then_paid').length, 0);
  },
);

test.serial(
  'a manual payment arriving while a charge is on its way waits for it, then finds nothing due: one payment, no ' +
    'money taken twice',
  async (t) => {
    const s = await subscribed('pm_slow_charge');
    let release!: () => void;
    fake.behave('pm_slow_charge', { hold: new Promise<void>((r) => (release = r)) });
    const charging = autoChargeDueInvoices(app.deps, new Date());
    await fake.received('pm_slow_charge');
    const manual = request(app.baseUrl, '/api/billing/payments', {
      cookie,
      body: { invoiceId: s.invoiceId, amount: '25.00', paymentMethod: 'bank_transfer' },
    });
    let answered = false;
    void manual.then(() => (answered = true));
    // The manual payment cannot commit while the charge holds the invoice: it waits for the charge's lock.
    await waitUntilBlocked(app.db);
    t.false(answered);
    release();
    t.is((await charging).charged, 1);
    const answer = await manual;
    t.is(answer.status, 400, answer.text);
    t.is(answer.body.error.code, 'amount_exceeds_due');
    const payments = await app.db('payments').where({ invoice_id: s.invoiceId });
    t.is(payments.length, 1);
    t.is(payments[0].payment_method, 'provider_a');
    t.is(await invoiceStatus(s.invoiceId), 'paid');
  },
);
