/**
 * Issue 39, TC-1: deleting a test clock removes every record of its customers (subscriptions, invoices with their
 * lines, charge attempts, dunning cases, payments, refunds, credit notes, store credit, usage events and aggregates,
 * API keys, licenses and their activations, portal links, emails, events and their webhook deliveries), and nothing
 * of a real customer who has the same kinds of records; the real invoice and credit note numbers stay gapless. A clock
 * past its `deletesAfter` (30 days) is deleted so by the hourly housekeeping job, unless it is advancing then.
 */
import test from 'ava';
import { purgeExpired } from '../../src/housekeeping/service.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { type Json, request } from '../helpers/http.ts';
import { numberingProblems } from '../lifecycle/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { apiKeyOf, makeMetric, makeUsagePlan } from '../usage/fixtures.ts';
import { advance, api, clockCustomer, createClock, subscribe } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const ok = async (res: Promise<{ status: number; text: string; body: Json }>, status = 201): Promise<Json> => {
  const answer = await res;
  if (answer.status !== status) throw new Error(`${answer.status} ${answer.text}`);
  return answer.body;
};

/** Tables whose rows name their customer in `customer_id`. */
const BY_CUSTOMER = [
  'subscriptions',
  'invoices',
  'dunning_cases',
  'payments',
  'credit_notes',
  'credit_ledger',
  'usage_events',
  'usage_aggregates',
  'usage_event_keys',
  'api_keys',
  'payment_methods',
  'licenses',
  'portal_links',
  'emails',
];

/** The records hanging off these customers, table by table (each query names them by key, not by clock). */
async function footprint(customerIds: string[]): Promise<Record<string, number>> {
  const ids = `(select unnest(?::uuid[]))`;
  const events = `(select id from events where data->>'customerId' in (select unnest(?::text[])))`;
  const queries: Record<string, string> = {
    customers: `select count(*) from customers where id in ${ids}`,
    ...Object.fromEntries(BY_CUSTOMER.map((t) => [t, `select count(*) from ${t} where customer_id in ${ids}`])),
    invoice_line_items: `select count(*) from invoice_line_items where invoice_id in
      (select id from invoices where customer_id in ${ids})`,
    charge_attempts: `select count(*) from charge_attempts where invoice_id in
      (select id from invoices where customer_id in ${ids})`,
    refunds: `select count(*) from refunds where payment_id in (select id from payments where customer_id in ${ids})`,
    license_activations: `select count(*) from license_activations where license_id in
      (select id from licenses where customer_id in ${ids})`,
    events: `select count(*) from events where id in ${events}`,
    webhook_deliveries: `select count(*) from webhook_deliveries where event_id in ${events}`,
  };
  const counts: Record<string, number> = {};
  for (const [table, sql] of Object.entries(queries)) {
    const bindings = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => customerIds);
    counts[table] = Number((await app.db.raw(sql, bindings)).rows[0].count);
  }
  return counts;
}

/** A customer with every kind of record: a declined card's dunning, a paid and refunded payment, a credit note,
 * store credit, usage through an API key, a license with a device, a portal link; events with deliveries. */
async function customerWithEverything(clockId: string | null, metric: { code: string }, planId: string) {
  const customer = await clockCustomer(app, cookie, clockId, 'pm_card_chargeDeclined');
  const sub = await subscribe(app, cookie, customer.id, { id: planId });
  const invoice = await app.db('invoices').where({ subscription_id: sub.id }).first();
  const payment = await ok(
    api(app, cookie, '/api/billing/payments', {
      body: { invoiceId: invoice.id, amount: '5.00', paymentMethod: 'bank_transfer' },
    }),
  );
  await ok(api(app, cookie, '/api/billing/refunds', { body: { paymentId: payment.id, amount: '1.00', reason: 'x' } }));
  await ok(
    api(app, cookie, '/api/billing/credit-notes', { body: { invoiceId: invoice.id, amount: '1.00', reason: 'x' } }),
  );
  await ok(
    api(app, cookie, '/api/billing/credits', {
      body: { customerId: customer.id, amount: '2.00', currency: 'USD', description: 'goodwill' },
    }),
  );
  const key = await apiKeyOf(app, cookie, customer.id);
  const events = [1, 2, 3].map((i) => ({ transactionId: `del-${customer.id}-${i}`, metric: metric.code }));
  await ok(request(app.baseUrl, '/api/v1/usage/events', { bearer: key, body: { events } }), 200);
  const [product] = await app.db('products').insert({ name: 'App', product_type: 'saas', price: '9' }).returning('id');
  const license = await ok(
    api(app, cookie, '/api/licenses', { body: { customerId: customer.id, productId: product.id } }),
  );
  await ok(
    request(app.baseUrl, '/api/licenses/validate', {
      body: { licenseKey: license.licenseKey, deviceId: 'device-1', deviceName: 'Laptop' },
    }),
    200,
  );
  await ok(api(app, cookie, '/api/billing/portal-sessions', { body: { customerId: customer.id } }));
  return customer.id as string;
}

test.serial('an expired clock is deleted by the housekeeping job; an advancing or younger one stays', async (t) => {
  const expiring = await createClock(app, cookie, '2026-01-01T00:00:00.000Z');
  const plan = await makePlan(app.db, '10.00', 'monthly');
  const customer = await clockCustomer(app, cookie, expiring.id);
  await subscribe(app, cookie, customer.id, plan);
  const advancing = await createClock(app, cookie, '2026-01-01T00:00:00.000Z');
  // No lifecycle worker runs in this test: the advance stays `advancing`.
  await ok(
    api(app, cookie, `/api/billing/test-clocks/${advancing.id}/advance`, { body: { frozenTime: '2026-02-01' } }),
    202,
  );
  const younger = await createClock(app, cookie, '2026-01-01T00:00:00.000Z');
  t.true(younger.deletesAfter > expiring.deletesAfter);
  const asOf = new Date(new Date(expiring.deletesAfter).getTime() + 1);

  const early = await purgeExpired(app.db, new Date(asOf.getTime() - 2));
  t.is(early.testClocks, 0, 'nothing before its deletesAfter');
  const counts = await purgeExpired(app.db, asOf);
  t.is(counts.testClocks, 1);
  // The purge 30 days ahead ended the admin's session too.
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  t.is((await api(app, cookie, `/api/billing/test-clocks/${expiring.id}`)).status, 404);
  t.deepEqual(
    Object.entries(await footprint([customer.id])).filter(([, n]) => n > 0),
    [],
    'its customer went with every record',
  );
  const audit = await app.db('audit_log').where({ target_id: expiring.id, action: 'test_clock.expire' }).first();
  t.is(audit?.actor, 'system', 'audited as done by the system');
  for (const kept of [advancing, younger])
    t.is((await api(app, cookie, `/api/billing/test-clocks/${kept.id}`)).status, 200);
});

test.serial("deleting a clock removes all its customers' records and none of a real customer's", async (t) => {
  t.timeout(120_000);
  await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
  await ok(
    api(app, cookie, '/api/billing/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } }),
  );
  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '0.50' }], '20.00');
  const clock = await createClock(app, cookie, new Date(Date.now() - 86_400_000).toISOString());
  const onClock = await customerWithEverything(clock.id, metric, plan.id);
  const real = await customerWithEverything(null, metric, plan.id);
  // The declined card fails at the clock's next moment and opens a dunning case.
  await advance(app, cookie, clock.id, new Date(Date.now() + 3 * 86_400_000).toISOString());

  const clockBefore = await footprint([onClock]);
  const missing = Object.entries(clockBefore).filter(([table, n]) => n === 0 && table !== 'dunning_cases');
  t.deepEqual(missing, [], 'the clock customer has a record of every kind');
  t.true(clockBefore.charge_attempts! > 0 && clockBefore.dunning_cases! > 0, JSON.stringify(clockBefore));
  const realBefore = await footprint([real]);

  const deleted = await api(app, cookie, `/api/billing/test-clocks/${clock.id}`, { method: 'DELETE' });
  t.is(deleted.status, 204, deleted.text);
  t.deepEqual(
    Object.entries(await footprint([onClock])).filter(([, n]) => n > 0),
    [],
    'nothing of the clock customer is left',
  );
  t.deepEqual(await footprint([real]), realBefore, "the real customer's records are all there");
  t.deepEqual(await numberingProblems(app.db), [], 'real invoice numbers stay gapless');
  const notes = await app.db('credit_notes').orderBy('number').pluck('number');
  t.deepEqual(notes, ['CN-2026-0001'], 'the real credit note keeps its number');
});
