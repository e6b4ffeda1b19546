import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { money } from '../../src/money.ts';
import { changePlan } from '../../src/subscriptions/change-plan.ts';
import { renewSubscription } from '../../src/subscriptions/renew.ts';
import { createSubscription, updateSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { balanceOf, invoicesOf, makePlan, newCustomer } from './fixtures.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

const APRIL_1 = new Date('2025-04-01T00:00:00.000Z');
const APRIL_21 = new Date('2025-04-21T00:00:00.000Z');
const eq = (a: string, b: string) => money(a).eq(b);

test('prorated upgrade: 10 of 30 days left, 30.00 to 60.00 credits 10.00 and charges 20.00 at once', async (t) => {
  const customer = await newCustomer(app.db);
  const [basic, pro] = [await makePlan(app.db, '30.00'), await makePlan(app.db, '60.00')];
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: basic.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  t.deepEqual([sub.current_period_start, sub.current_period_end], [APRIL_1, new Date('2025-05-01T00:00:00.000Z')]);

  const changed = await changePlan(app.db, sub.id, { newPlanId: pro.id, prorate: true }, SYSTEM_ACTOR, {
    now: APRIL_21,
  });
  t.is(changed.plan_id, pro.id);
  t.deepEqual(changed.current_period_end, sub.current_period_end, 'the period is kept');

  const credit = await app.db('credit_ledger').where({ customer_id: customer.id, kind: 'proration' }).first();
  t.true(eq(credit.amount, '10'), credit.amount);
  const invoices = await invoicesOf(app.db, sub.id);
  t.is(invoices.length, 2);
  const proration = invoices[1];
  t.true(eq(proration.total, '20'), proration.total);
  t.true(eq(proration.credit_applied, '10'), 'the credit applies to the proration invoice');
  t.is(proration.status, 'issued');
  t.true(eq(await balanceOf(app.db, customer.id), '0'));
  t.truthy(
    await app.db('events').where({ type: 'subscription.updated' }).whereRaw("data->>'id' = ?", [sub.id]).first(),
  );
});

test('prorated downgrade: 60.00 to 30.00 with a third left credits 20.00 and charges 10.00', async (t) => {
  const customer = await newCustomer(app.db);
  const [pro, basic] = [await makePlan(app.db, '60.00'), await makePlan(app.db, '30.00')];
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: pro.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  await changePlan(app.db, sub.id, { newPlanId: basic.id, prorate: true }, SYSTEM_ACTOR, { now: APRIL_21 });
  const proration = (await invoicesOf(app.db, sub.id))[1];
  t.true(eq(proration.total, '10'));
  t.true(eq(proration.credit_applied, '10'));
  t.true(eq(await balanceOf(app.db, customer.id), '10'), 'what the charge did not use stays on the balance');
});

test('proration rounds half-up by seconds: 7 hours into a 30-day month', async (t) => {
  const customer = await newCustomer(app.db);
  const [a, b] = [await makePlan(app.db, '10.00'), await makePlan(app.db, '20.00')];
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: a.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  await changePlan(app.db, sub.id, { newPlanId: b.id, prorate: true }, SYSTEM_ACTOR, {
    now: new Date('2025-04-01T07:00:00.000Z'),
  });
  // Left: 30 d - 7 h = 2,566,800 s of 2,592,000 s. 10.00 x 0.990277... = 9.9027... -> 9.90; 20.00 x ... = 19.805... ->
  // 19.81
  const credit = await app.db('credit_ledger').where({ customer_id: customer.id, kind: 'proration' }).first();
  t.true(eq(credit.amount, '9.90'), credit.amount);
  t.true(eq((await invoicesOf(app.db, sub.id))[1].total, '19.81'));
});

test('prorate false: no credit, no invoice now; the new price is billed from the next period', async (t) => {
  const customer = await newCustomer(app.db);
  const [basic, pro] = [await makePlan(app.db, '30.00'), await makePlan(app.db, '60.00')];
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: basic.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  await changePlan(app.db, sub.id, { newPlanId: pro.id, prorate: false }, SYSTEM_ACTOR, { now: APRIL_21 });
  t.is((await invoicesOf(app.db, sub.id)).length, 1);
  t.true(eq(await balanceOf(app.db, customer.id), '0'));
  await renewSubscription(app.db, sub.id, new Date('2025-05-01T00:00:00.000Z'));
  const invoices = await invoicesOf(app.db, sub.id);
  t.is(invoices.length, 2);
  t.true(eq(invoices[1].total, '60'));
});

test('a new billing cycle restarts the period now (prorated)', async (t) => {
  const customer = await newCustomer(app.db);
  const monthly = await makePlan(app.db, '30.00');
  const yearly = await makePlan(app.db, '300.00', 'yearly');
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: monthly.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  const changed = await changePlan(app.db, sub.id, { newPlanId: yearly.id, prorate: true }, SYSTEM_ACTOR, {
    now: APRIL_21,
  });
  t.is(changed.billing_cycle, 'yearly');
  t.deepEqual(
    [changed.current_period_start, changed.current_period_end],
    [APRIL_21, new Date('2026-04-21T00:00:00.000Z')],
  );
  const invoices = await invoicesOf(app.db, sub.id);
  t.is(invoices.length, 2);
  t.true(eq(invoices[1].total, '300'));
  t.true(eq(invoices[1].credit_applied, '10'));
});

test('a new billing cycle without proration starts at the end of the current period', async (t) => {
  const customer = await newCustomer(app.db);
  const monthly = await makePlan(app.db, '30.00');
  const yearly = await makePlan(app.db, '300.00', 'yearly');
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: monthly.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  await changePlan(app.db, sub.id, { newPlanId: yearly.id, prorate: false }, SYSTEM_ACTOR, { now: APRIL_21 });
  await renewSubscription(app.db, sub.id, new Date('2025-05-01T00:00:00.000Z'));
  const renewed = await app.db('subscriptions').where({ id: sub.id }).first();
  t.deepEqual(
    [renewed.current_period_start, renewed.current_period_end],
    [new Date('2025-05-01T00:00:00.000Z'), new Date('2026-05-01T00:00:00.000Z')],
  );
  t.true(eq((await invoicesOf(app.db, sub.id))[1].total, '300'));
});

test('a trialing subscription swaps plans without proration', async (t) => {
  const customer = await newCustomer(app.db);
  const [basic, pro] = [await makePlan(app.db, '30.00'), await makePlan(app.db, '60.00')];
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: basic.id, billingCycle: 'monthly', trialDays: 14 },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  const changed = await changePlan(app.db, sub.id, { newPlanId: pro.id, prorate: true }, SYSTEM_ACTOR, {
    now: APRIL_21,
  });
  t.is(changed.status, 'trialing');
  t.is((await invoicesOf(app.db, sub.id)).length, 0);
  t.true(eq(await balanceOf(app.db, customer.id), '0'));
});

test('refusals: same plan, another currency, unknown plan, canceled subscription — nothing changes', async (t) => {
  const customer = await newCustomer(app.db);
  const basic = await makePlan(app.db, '30.00');
  const euro = await makePlan(app.db, '30.00', 'monthly', 'EUR');
  const sub = await createSubscription(
    app.db,
    { customerId: customer.id, planId: basic.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
    { now: APRIL_1 },
  );
  const codeOf = async (p: Promise<unknown>) => ((await t.throwsAsync(p)) as { code?: string }).code;
  t.is(
    await codeOf(changePlan(app.db, sub.id, { newPlanId: basic.id, prorate: true }, SYSTEM_ACTOR, { now: APRIL_21 })),
    'same_plan',
  );
  t.is(
    await codeOf(changePlan(app.db, sub.id, { newPlanId: euro.id, prorate: true }, SYSTEM_ACTOR, { now: APRIL_21 })),
    'currency_mismatch',
  );
  t.is(
    await codeOf(
      changePlan(app.db, sub.id, { newPlanId: '00000000-0000-4000-8000-000000000000', prorate: true }, SYSTEM_ACTOR, {
        now: APRIL_21,
      }),
    ),
    'plan_not_found',
  );
  await updateSubscription(app.db, sub.id, { status: 'canceled' }, SYSTEM_ACTOR, { now: APRIL_21 });
  t.is(
    await codeOf(changePlan(app.db, sub.id, { newPlanId: euro.id, prorate: true }, SYSTEM_ACTOR, { now: APRIL_21 })),
    'subscription_canceled',
  );
  t.is((await app.db('subscriptions').where({ id: sub.id }).first()).plan_id, basic.id);
  t.is((await invoicesOf(app.db, sub.id)).length, 1);
  t.true(eq(await balanceOf(app.db, customer.id), '0'));
});
