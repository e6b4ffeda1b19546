/**
 * Issue 39, TC-5: a clock customer's charges call no provider (no provider_a is configured here at all) and use the
 * test methods: a declined one walks the whole dunning schedule to dunning.failed in one advance, another method is
 * declined with test_clock_no_test_method; its events carry the clock; its emails are captured while a real
 * customer's go out over SMTP. A yearly license expires by the clock; usage of a period the clock closed is billed.
 */
import test from 'ava';
import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { startFakeSmtp, type FakeSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { apiKeyOf, makeMetric, makeUsagePlan } from '../usage/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { advance, api, clockCustomer, createClock, eventsOfCustomer, subscribe } from './fixtures.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
let smtp: FakeSmtp;
let stopWorkers: () => Promise<void> = async () => {};
test.before(async () => {
  smtp = await startFakeSmtp();
  app = await startTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Billing <billing@acme.test>' });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  stopWorkers = await registerWorkers(app.boss, app.deps, ['lifecycle', 'emails', 'pdf'], jobHandlers);
});
test.after.always(async () => {
  await stopWorkers();
  // The queue first (its pdf jobs end), then the browser they render in.
  await app?.close();
  await closeSharedBrowser();
  await smtp?.close();
});

test.serial('a declined test method walks the dunning schedule to dunning.failed in one advance', async (t) => {
  const plan = await makePlan(app.db, '49.00', 'monthly');
  const clock = await createClock(app, cookie, '2026-03-01T09:00:00.000Z');
  const customer = await clockCustomer(app, cookie, clock.id, 'pm_card_chargeDeclined');
  const sub = await subscribe(app, cookie, customer.id, plan);
  await advance(app, cookie, clock.id, '2026-03-20T09:00:00.000Z');

  const types = (await eventsOfCustomer(app.db, customer.id)).map((e) => e.type);
  t.deepEqual(
    types.filter((type) => type.startsWith('dunning.') || type.startsWith('subscription.')),
    ['subscription.created', 'subscription.updated', 'dunning.started', 'dunning.failed', 'subscription.canceled'],
  );
  const [invoice] = await app.db('invoices').where({ customer_id: customer.id });
  const attempts = await app.db('charge_attempts').where({ invoice_id: invoice.id }).orderBy('attempt');
  t.deepEqual(
    attempts.map((a) => [a.attempt, a.status, a.failure_reason, a.completed_at.toISOString().slice(0, 10)]),
    [
      [1, 'declined', 'card_declined', '2026-03-01'],
      [2, 'declined', 'card_declined', '2026-03-02'],
      [3, 'declined', 'card_declined', '2026-03-04'],
      [4, 'declined', 'card_declined', '2026-03-06'],
      [5, 'declined', 'card_declined', '2026-03-08'],
    ],
    'each retry at its day of the schedule [1, 3, 5, 7], by the clock',
  );
  const dunningCase = await app.db('dunning_cases').where({ invoice_id: invoice.id }).first();
  t.like(dunningCase, { status: 'failed' });
  t.is((await app.db('subscriptions').where({ id: sub.id }).first()).status, 'canceled');
  t.is((await app.db('invoices').where({ id: invoice.id }).first()).status, 'overdue', 'overdue by the clock');
});

test.serial('a method that is not a test method is declined with test_clock_no_test_method', async (t) => {
  const plan = await makePlan(app.db, '10.00', 'monthly');
  const clock = await createClock(app, cookie, '2026-03-01T09:00:00.000Z');
  const customer = await clockCustomer(app, cookie, clock.id, 'pm_1QxR7a2eZvKYlo2C');
  await subscribe(app, cookie, customer.id, plan);
  await advance(app, cookie, clock.id, '2026-03-01T12:00:00.000Z');
  const [invoice] = await app.db('invoices').where({ customer_id: customer.id });
  const [attempt] = await app.db('charge_attempts').where({ invoice_id: invoice.id });
  t.like(attempt, { status: 'declined', failure_reason: 'test_clock_no_test_method' });
});

test.serial("a clock customer's emails are captured, a real customer's sent; events carry the clock", async (t) => {
  const plan = await makePlan(app.db, '15.00', 'monthly');
  const clock = await createClock(app, cookie, '2026-05-01T00:00:00.000Z');
  const onClock = await clockCustomer(app, cookie, clock.id, 'pm_card_visa');
  const real = await clockCustomer(app, cookie, null);
  await subscribe(app, cookie, onClock.id, plan);
  await subscribe(app, cookie, real.id, plan);
  await advance(app, cookie, clock.id, '2026-06-01T00:00:00.000Z');
  const settled = (customerId: string) =>
    waitFor(
      () => app.db('emails').where({ customer_id: customerId }).select('status', 'to_address'),
      (rows) => rows.length > 0 && rows.every((r) => r.status !== 'queued'),
    );
  const clockEmails = await settled(onClock.id);
  const realEmails = await settled(real.id);
  t.true(clockEmails.length >= 2, 'issued invoices and receipts');
  t.true(
    clockEmails.every((e) => e.status === 'captured'),
    JSON.stringify(clockEmails),
  );
  t.true(realEmails.every((e) => e.status === 'sent'));
  t.false(
    smtp.received.some((m) => m.to.includes(onClock.email)),
    'nothing reached the SMTP server for the clock customer',
  );
  t.true(smtp.received.some((m) => m.to.includes(real.email)));
  const clockEvents = await eventsOfCustomer(app.db, onClock.id);
  t.true(clockEvents.length > 0 && clockEvents.every((e) => e.data.testClock === clock.id));
  t.true((await eventsOfCustomer(app.db, real.id)).every((e) => !('testClock' in e.data)));
});

test.serial('a yearly license expires by the clock', async (t) => {
  const clock = await createClock(app, cookie, '2026-01-10T00:00:00.000Z');
  const customer = await clockCustomer(app, cookie, clock.id);
  const [product] = await app
    .db('products')
    .insert({ name: 'Desktop app', product_type: 'saas', price: '99' })
    .returning('id');
  const license = await api(app, cookie, '/api/licenses', {
    body: { customerId: customer.id, productId: product.id, expiresAt: '2027-01-10T00:00:00.000Z' },
  });
  t.is(license.status, 201, license.text);
  await advance(app, cookie, clock.id, '2026-12-01T00:00:00.000Z');
  t.is((await app.db('licenses').where({ customer_id: customer.id }).first()).status, 'active');
  await advance(app, cookie, clock.id, '2027-02-01T00:00:00.000Z');
  t.is((await app.db('licenses').where({ customer_id: customer.id }).first()).status, 'expired');
  const expired = (await eventsOfCustomer(app.db, customer.id)).filter((e) => e.type === 'license.expired');
  t.is(expired.length, 1);
  t.is(expired[0]!.data.testClock, clock.id);
});

test.serial('usage of a period the clock closed is billed on its renewal invoice', async (t) => {
  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.50' }]);
  const start = new Date(Date.now() - 2 * 86_400_000);
  start.setUTCMilliseconds(0);
  const clock = await createClock(app, cookie, start.toISOString());
  const customer = await clockCustomer(app, cookie, clock.id, 'pm_card_visa');
  const sub = await subscribe(app, cookie, customer.id, { id: plan.id });
  const key = await apiKeyOf(app, cookie, customer.id);
  const events = Array.from({ length: 6 }, (_, i) => ({ transactionId: `tc-usage-${i}`, metric: metric.code }));
  const sent = await request(app.baseUrl, '/api/v1/usage/events', { bearer: key, body: { events } });
  t.is(sent.status, 200, sent.text);
  t.true(
    sent.body.results.every((r: { status: string }) => r.status === 'accepted'),
    sent.text,
  );
  const periodEnd = (await app.db('subscriptions').where({ id: sub.id }).first()).current_period_end as Date;
  await advance(app, cookie, clock.id, new Date(periodEnd.getTime() + 3_600_000).toISOString());
  const renewal = await app
    .db('invoices')
    .where({ subscription_id: sub.id })
    .where('period_start', '>=', periodEnd)
    .first();
  t.truthy(renewal, 'the renewal invoice');
  const lines = await app.db('invoice_line_items').where({ invoice_id: renewal.id });
  const usageLine = lines.find((l) => l.usage);
  t.truthy(usageLine, JSON.stringify(lines));
  t.is(Number(usageLine.amount), 3, '6 events at 0.50');
});
