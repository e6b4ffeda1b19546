import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { money } from '../../src/money.ts';
import { renewSubscription } from '../../src/subscriptions/renew.ts';
import { createSubscription, updateSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { invoicesOf, makePlan, newCustomer } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const at = (s: string) => new Date(`${s}T00:00:00.000Z`);
const eventsOf = async (id: string) =>
  (await app.db('events').whereRaw("data->>'id' = ?", [id]).orderBy('created_at')).map((e) => e.type);

test('create over HTTP without a trial: active, one period, its invoice issued at once, events', async (t) => {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, '49.00');
  const res = await request(app.baseUrl, '/api/billing/subscriptions', {
    cookie,
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
  });
  t.is(res.status, 201, res.text);
  t.like(res.body, {
    status: 'active',
    billingCycle: 'monthly',
    cancelAtPeriodEnd: false,
    trialEnd: null,
    canceledAt: null,
  });
  const invoices = await invoicesOf(app.db, res.body.id);
  t.is(invoices.length, 1);
  t.is(invoices[0].status, 'issued');
  t.true(money(invoices[0].total).eq('49'));
  t.deepEqual(invoices[0].period_start.toISOString(), res.body.currentPeriodStart);
  t.deepEqual(await eventsOf(res.body.id), ['subscription.created']);
  const customerRead = await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie });
  t.deepEqual(
    customerRead.body.subscriptions.map((s: { id: string }) => s.id),
    [res.body.id],
  );
  t.is(customerRead.body.products.length, 1);
});

test('a trial: trialing, no invoice; the sweep at trial end activates and invoices once', async (t) => {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, '20.00');
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', trialDays: 14 },
    SYSTEM_ACTOR,
    { now: at('2025-03-01') },
  );
  t.is(sub.status, 'trialing');
  t.deepEqual(sub.trial_end, at('2025-03-15'));
  t.deepEqual(sub.current_period_end, at('2025-03-15'));
  t.is((await invoicesOf(app.db, sub.id)).length, 0);
  t.deepEqual(await renewSubscription(app.db, sub.id, at('2025-03-14')), {
    periodsAdvanced: 0,
    invoicesCreated: 0,
    trialsEnded: 0,
    canceled: 0,
  });
  t.deepEqual(await renewSubscription(app.db, sub.id, at('2025-03-15')), {
    periodsAdvanced: 1,
    invoicesCreated: 1,
    trialsEnded: 1,
    canceled: 0,
  });
  const after = await app.db('subscriptions').where({ id: sub.id }).first();
  t.is(after.status, 'active');
  t.deepEqual([after.current_period_start, after.current_period_end], [at('2025-03-15'), at('2025-04-15')]);
  t.deepEqual(await renewSubscription(app.db, sub.id, at('2025-03-20')), {
    periodsAdvanced: 0,
    invoicesCreated: 0,
    trialsEnded: 0,
    canceled: 0,
  });
  t.is((await invoicesOf(app.db, sub.id)).length, 1);
});

test(
  'catch-up: a subscription months behind is invoiced once per missed period, anchor-based; concurrent sweeps add ' +
    'nothing twice',
  async (t) => {
    const customer = await newCustomer(app.db);
    const plan = await makePlan(app.db, '10.00');
    const sub = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: at('2025-01-31') },
    );
    const results = await Promise.all([
      renewSubscription(app.db, sub.id, at('2025-05-15')),
      renewSubscription(app.db, sub.id, at('2025-05-15')),
    ]);
    t.is(results[0]!.invoicesCreated + results[1]!.invoicesCreated, 3);
    const starts = (await invoicesOf(app.db, sub.id)).map((i) => i.period_start.toISOString().slice(0, 10)).sort();
    t.deepEqual(starts, ['2025-01-31', '2025-02-28', '2025-03-31', '2025-04-30']);
  },
);

test(
  'pause stops invoicing; resume before the period ends invoices nothing; resume after restarts the period and ' +
    'invoices it',
  async (t) => {
    const customer = await newCustomer(app.db);
    const plan = await makePlan(app.db, '15.00');
    const sub = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: at('2025-01-10') },
    );
    const paused = await updateSubscription(app.db, sub.id, { status: 'paused' }, SYSTEM_ACTOR, {
      now: at('2025-01-20'),
    });
    t.is(paused.status, 'paused');
    t.is((await renewSubscription(app.db, sub.id, at('2025-03-01'))).invoicesCreated, 0);
    const early = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: at('2025-01-10') },
    );
    await updateSubscription(app.db, early.id, { status: 'paused' }, SYSTEM_ACTOR, { now: at('2025-01-15') });
    const resumedEarly = await updateSubscription(app.db, early.id, { status: 'active' }, SYSTEM_ACTOR, {
      now: at('2025-01-20'),
    });
    t.is(resumedEarly.status, 'active');
    t.deepEqual(resumedEarly.current_period_end, at('2025-02-10'));
    t.is((await invoicesOf(app.db, early.id)).length, 1);

    const resumed = await updateSubscription(app.db, sub.id, { status: 'active' }, SYSTEM_ACTOR, {
      now: at('2025-03-05'),
    });
    t.is(resumed.status, 'active');
    t.deepEqual([resumed.current_period_start, resumed.current_period_end], [at('2025-03-05'), at('2025-04-05')]);
    const invoices = await invoicesOf(app.db, sub.id);
    t.is(invoices.length, 2);
    t.deepEqual(invoices[1].period_start, at('2025-03-05'));
    t.deepEqual(await eventsOf(sub.id), ['subscription.created', 'subscription.updated', 'subscription.updated']);
  },
);

test('pausing a trial and resuming before its end makes it trialing again', async (t) => {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, '15.00');
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', trialDays: 30 },
    SYSTEM_ACTOR,
    { now: at('2025-01-01') },
  );
  await updateSubscription(app.db, sub.id, { status: 'paused' }, SYSTEM_ACTOR, { now: at('2025-01-05') });
  const back = await updateSubscription(app.db, sub.id, { status: 'active' }, SYSTEM_ACTOR, { now: at('2025-01-10') });
  t.is(back.status, 'trialing');
  t.is((await invoicesOf(app.db, sub.id)).length, 0);
});

test('cancel is final: canceledAt, subscription.canceled, later changes 409 and change nothing', async (t) => {
  const customer = await newCustomer(app.db);
  const [plan, other] = [await makePlan(app.db, '15.00'), await makePlan(app.db, '25.00')];
  const created = await request(app.baseUrl, '/api/billing/subscriptions', {
    cookie,
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
  });
  const id = created.body.id;
  const canceled = await request(app.baseUrl, `/api/billing/subscriptions/${id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'canceled' },
  });
  t.is(canceled.status, 200);
  t.is(canceled.body.status, 'canceled');
  t.truthy(canceled.body.canceledAt);
  t.deepEqual(await eventsOf(id), ['subscription.created', 'subscription.canceled']);
  const before = await app.db('subscriptions').where({ id }).first();
  for (const body of [{ status: 'active' }, { status: 'paused' }, { cancelAtPeriodEnd: true }]) {
    const res = await request(app.baseUrl, `/api/billing/subscriptions/${id}`, { method: 'PUT', cookie, body });
    t.is(res.status, 409);
    t.is(res.body.error.code, 'subscription_canceled');
  }
  const change = await request(app.baseUrl, `/api/billing/subscriptions/${id}/change-plan`, {
    cookie,
    body: { newPlanId: other.id },
  });
  t.is(change.status, 409);
  t.deepEqual(await app.db('subscriptions').where({ id }).first(), before);
  t.is((await renewSubscription(app.db, id, new Date(Date.now() + 90 * 86_400_000))).invoicesCreated, 0);
});

test(
  'cancel at period end: status kept, then the sweep cancels at the period end without a new invoice; false ' +
    'unschedules',
  async (t) => {
    const customer = await newCustomer(app.db);
    const plan = await makePlan(app.db, '15.00');
    const sub = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: at('2025-01-10') },
    );
    const scheduled = await updateSubscription(app.db, sub.id, { cancelAtPeriodEnd: true }, SYSTEM_ACTOR, {
      now: at('2025-01-15'),
    });
    t.is(scheduled.status, 'active');
    t.true(scheduled.cancel_at_period_end);
    t.deepEqual(await renewSubscription(app.db, sub.id, at('2025-03-01')), {
      periodsAdvanced: 0,
      invoicesCreated: 0,
      trialsEnded: 0,
      canceled: 1,
    });
    const done = await app.db('subscriptions').where({ id: sub.id }).first();
    t.is(done.status, 'canceled');
    t.deepEqual(done.canceled_at, at('2025-02-10'));
    t.is((await invoicesOf(app.db, sub.id)).length, 1);
    t.deepEqual(await eventsOf(sub.id), ['subscription.created', 'subscription.updated', 'subscription.canceled']);

    const other = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: at('2025-01-10') },
    );
    await updateSubscription(app.db, other.id, { cancelAtPeriodEnd: true }, SYSTEM_ACTOR, { now: at('2025-01-15') });
    await updateSubscription(app.db, other.id, { cancelAtPeriodEnd: false }, SYSTEM_ACTOR, { now: at('2025-01-16') });
    t.is((await renewSubscription(app.db, other.id, at('2025-02-10'))).invoicesCreated, 1);
    t.is((await app.db('subscriptions').where({ id: other.id }).first()).status, 'active');
  },
);

const refusals: [string, (ids: { customerId: string; planId: string }) => Record<string, unknown>, number, string][] = [
  [
    'an unknown plan',
    (ids) => ({ ...ids, planId: '00000000-0000-4000-8000-000000000000', billingCycle: 'monthly' }),
    400,
    'plan_not_found',
  ],
  [
    'an unknown customer',
    (ids) => ({ ...ids, customerId: '00000000-0000-4000-8000-000000000000', billingCycle: 'monthly' }),
    400,
    'customer_not_found',
  ],
  ['a cycle other than the plan', (ids) => ({ ...ids, billingCycle: 'yearly' }), 400, 'billing_cycle_mismatch'],
  ['a negative trial', (ids) => ({ ...ids, billingCycle: 'monthly', trialDays: -1 }), 400, 'invalid_request'],
  ['a huge trial', (ids) => ({ ...ids, billingCycle: 'monthly', trialDays: 731 }), 400, 'invalid_request'],
  ['a fractional trial', (ids) => ({ ...ids, billingCycle: 'monthly', trialDays: 1.5 }), 400, 'invalid_request'],
  ['a string trial', (ids) => ({ ...ids, billingCycle: 'monthly', trialDays: '3' }), 400, 'invalid_request'],
  ['an unknown coupon', (ids) => ({ ...ids, billingCycle: 'monthly', couponCode: 'NOPE' }), 400, 'invalid_coupon'],
];

for (const [name, body, status, code] of refusals) {
  test(`create with ${name} is ${status} ${code} and creates nothing`, async (t) => {
    const customer = await newCustomer(app.db);
    const plan = await makePlan(app.db, '15.00');
    const res = await request(app.baseUrl, '/api/billing/subscriptions', {
      cookie,
      body: body({ customerId: customer.id, planId: plan.id }),
    });
    t.is(res.status, status, res.text);
    t.is(res.body.error.code, code);
    t.is(Number((await app.db('subscriptions').where({ customer_id: customer.id }).count('* as n').first())?.n), 0);
    t.is(Number((await app.db('invoices').where({ customer_id: customer.id }).count('* as n').first())?.n), 0);
  });
}

test('v1: a key sees only its customer subscriptions, and the subscribed product', async (t) => {
  const [mine, theirs] = [await newCustomer(app.db), await newCustomer(app.db)];
  const plan = await makePlan(app.db, '12.00');
  const own = await createSubscription(
    app.db,
    { customerId: mine.id, planId: plan.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
  );
  await createSubscription(app.db, { customerId: theirs.id, planId: plan.id, billingCycle: 'monthly' }, SYSTEM_ACTOR);
  const key = (await request(app.baseUrl, '/api/api-keys', { cookie, body: { name: 'v1', customerId: mine.id } })).body
    .key;
  const subs = await request(app.baseUrl, '/api/v1/subscriptions', { bearer: key });
  t.is(subs.status, 200);
  t.deepEqual(
    subs.body.map((s: { id: string }) => s.id),
    [own.id],
  );
  const products = await request(app.baseUrl, '/api/v1/products', { bearer: key });
  t.deepEqual(
    products.body.map((p: { id: string }) => p.id),
    [plan.product_id],
  );
  t.is((await request(app.baseUrl, '/api/v1/subscriptions', { cookie })).status, 401);
});

test('create with an inactive plan is 400 plan_inactive and creates nothing, whatever the customer', async (t) => {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, '15.00');
  await app.db('plans').where({ id: plan.id }).update({ active: false });
  for (const customerId of [customer.id, '00000000-0000-4000-8000-000000000000']) {
    const res = await request(app.baseUrl, '/api/billing/subscriptions', {
      cookie,
      body: { customerId, planId: plan.id, billingCycle: 'monthly' },
    });
    t.is(res.status, 400, res.text);
    t.is(res.body.error.code, 'plan_inactive');
  }
  t.is(Number((await app.db('subscriptions').where({ plan_id: plan.id }).count('* as n').first())?.n), 0);
});

test('create spends the customer store credit on the first invoice, due after the payment terms', async (t) => {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, '49.00');
  await app
    .db('credit_ledger')
    .insert({ customer_id: customer.id, currency: 'USD', amount: '10.00', kind: 'credit', description: 'goodwill' });
  const res = await request(app.baseUrl, '/api/billing/subscriptions', {
    cookie,
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
  });
  t.is(res.status, 201, res.text);
  const [invoice] = await invoicesOf(app.db, res.body.id);
  t.true(money(invoice.credit_applied).eq('10'), invoice.credit_applied);
  t.is(invoice.status, 'issued');
  t.is(invoice.due_date.getTime() - invoice.issued_at.getTime(), 14 * 86_400_000);
  const applied = await app.db('credit_ledger').where({ invoice_id: invoice.id, kind: 'application' });
  t.deepEqual(
    applied.map((e) => [money(e.amount).toString(), e.description]),
    [['-10', `Applied to ${invoice.invoice_number}`]],
  );
});
