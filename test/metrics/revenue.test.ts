/**
 * GET /api/metrics/revenue (console.md C-10): MRR checked to the cent against the test's own arithmetic,
 * receivables and collections, and MRR movements across a month boundary.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import type { Knex } from 'knex';
import type { Json } from '../helpers/http.ts';
import { createInvoice } from '../../src/invoices/service.ts';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import { markOverdueInvoices } from '../../src/lifecycle/overdue.ts';
import { revenueMetrics } from '../../src/metrics/service.ts';
import { recordPayment } from '../../src/payments/service.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { changePlan } from '../../src/subscriptions/change-plan.ts';
import { updateSubscription } from '../../src/subscriptions/service.ts';
import { lockSubscriptionRow } from '../../src/subscriptions/repo.ts';
import { transitionSubscription } from '../../src/subscriptions/transitions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { adminApi, makePlan, type Api } from '../subscriptions/fixtures.ts';
import { expectedMrr, makeCoupon, subscribe } from './fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  api = adminApi(app, (await loginAsAdmin(app.baseUrl, app.db)).cookie);
});
test.after.always(async () => app?.close());

const DAY = 86_400_000;
const revenue = async () => {
  const res = await api('/api/metrics/revenue');
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body as { at: string; currencies: Json[]; mostOverdue: Json[] };
};
const inCurrency = (body: { currencies: Json[] }, currency: string) =>
  body.currencies.find((c) => c.currency === currency);

// Serial: each test owns its currencies, and the overdue one runs before the time travel marks old invoices overdue.
test.serial(
  'C-10: MRR per currency to the cent: cycles normalised, coupons in force on the next invoice, only active and ' +
    'past_due count',
  async (t) => {
    const monthly = await makePlan(app.db, '10.00', 'monthly');
    const quarterly = await makePlan(app.db, '100.00', 'quarterly');
    const yearly = await makePlan(app.db, '1000.00', 'yearly');
    const twenty = await makePlan(app.db, '20.00', 'monthly');
    const fifty = await makePlan(app.db, '50.00', 'quarterly');
    const cheap = await makePlan(app.db, '9.99', 'monthly');
    const yearlyOdd = await makePlan(app.db, '99.99', 'yearly');

    await subscribe(app.db, monthly);
    await subscribe(app.db, quarterly);
    await subscribe(app.db, yearly);
    // Spent on the first invoice: the next one is at full price.
    const once = await makeCoupon(app.db, { percentOff: '50', duration: 'once' });
    await subscribe(app.db, twenty, { couponCode: once.code });
    // 15% of 50.00 for 3 invoices, one used: 42.50 a quarter.
    const repeating = await makeCoupon(app.db, { percentOff: '15', duration: 'repeating', durationInCycles: 3 });
    await subscribe(app.db, fifty, { couponCode: repeating.code });
    const amountOff = await makeCoupon(app.db, { amountOff: '2.50', currency: 'USD' });
    await subscribe(app.db, cheap, { couponCode: amountOff.code });
    const pastDue = await subscribe(app.db, yearlyOdd);
    await app.db.transaction(async (trx) =>
      transitionSubscription(trx, (await lockSubscriptionRow(trx, pastDue.id))!, 'past_due', new Date()),
    );
    // Count nothing: trialing, paused, canceled.
    await subscribe(app.db, await makePlan(app.db, '30.00'), { trialDays: 14 });
    const paused = await subscribe(app.db, await makePlan(app.db, '40.00'));
    await updateSubscription(app.db, paused.id, { status: 'paused' }, SYSTEM_ACTOR);
    const canceled = await subscribe(app.db, await makePlan(app.db, '50.00'));
    await updateSubscription(app.db, canceled.id, { status: 'canceled' }, SYSTEM_ACTOR);

    const eurMonthly = await makePlan(app.db, '19.99', 'monthly', 'EUR');
    const eurQuarterly = await makePlan(app.db, '10.00', 'quarterly', 'EUR');
    const eurYearly = await makePlan(app.db, '120.00', 'yearly', 'EUR');
    await subscribe(app.db, eurMonthly);
    await subscribe(app.db, eurQuarterly);
    await subscribe(app.db, eurYearly, { couponCode: (await makeCoupon(app.db, { percentOff: '10' })).code });

    const body = await revenue();
    const usd = inCurrency(body, 'USD');
    const usdMrr = expectedMrr([
      { netMinor: 1000, months: 1 },
      { netMinor: 10000, months: 3 },
      { netMinor: 100000, months: 12 },
      { netMinor: 2000, months: 1 },
      { netMinor: 4250, months: 3 },
      { netMinor: 749, months: 1 },
      { netMinor: 9999, months: 12 },
    ]);
    t.is(usdMrr, '176.65');
    t.like(usd, { mrr: usdMrr, arr: '2119.80', activeSubscriptions: 7, trialingSubscriptions: 1 });
    const eurMrr = expectedMrr([
      { netMinor: 1999, months: 1 },
      { netMinor: 1000, months: 3 },
      { netMinor: 10800, months: 12 },
    ]);
    t.is(eurMrr, '32.32');
    t.like(inCurrency(body, 'EUR'), { mrr: eurMrr, arr: '387.84', activeSubscriptions: 3, trialingSubscriptions: 0 });
    // Everything started this month: all of it is new, and the series ends at today's MRR.
    t.deepEqual(usd.movements, { new: usdMrr, expansion: '0.00', contraction: '0.00', churn: '0.00' });
    t.is(usd.series.length, 12);
    t.is(usd.series.at(-1).month, new Date().toISOString().slice(0, 7));
    t.is(usd.series.at(-1).mrr, usdMrr);
    t.is(usd.series.at(-2).mrr, '0.00');
  },
);

test.serial(
  'outstanding, overdue and collected (payments less refunds) in the calendar month; the most overdue invoices',
  async (t) => {
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 3 * DAY);
    const customer = await insertCustomer(app.db, { name: 'Late Payer KK' });
    const invoice = (total: string, dueDate: Date, at = now) =>
      createInvoice(
        app.db,
        {
          customerId: customer.id,
          currency: 'JPY',
          taxRate: '0',
          status: 'issued',
          dueDate,
          lineItems: [{ description: 'Work', quantity: 1, unitPrice: total }],
        },
        SYSTEM_ACTOR,
        { now: at },
      );
    const refund = (paymentId: string, amount: string) =>
      createRefund(app.db, { paymentId, amount, reason: null }, SYSTEM_ACTOR, { config: app.deps.config, now });

    const open = await invoice('10000', new Date(now.getTime() + 30 * DAY));
    const partly = await recordPayment(
      app.db,
      { invoiceId: open.invoice.id, amount: '3000', paymentMethod: 'manual' },
      SYSTEM_ACTOR,
      { now },
    );
    await refund(partly.id, '500');
    const late = await invoice('5000', new Date(now.getTime() - 2 * DAY), new Date(now.getTime() - 20 * DAY));
    await recordPayment(
      app.db,
      { invoiceId: late.invoice.id, amount: '1000', paymentMethod: 'bank_transfer' },
      SYSTEM_ACTOR,
      { now },
    );
    t.is(await markOverdueInvoices(app.db, now), 1);
    const paidBefore = await invoice('10000', new Date(lastMonth.getTime() + 30 * DAY), lastMonth);
    const old = await recordPayment(
      app.db,
      { invoiceId: paidBefore.invoice.id, amount: '10000', paymentMethod: 'manual' },
      SYSTEM_ACTOR,
      { now: lastMonth },
    );
    await refund(old.id, '1000');

    const body = await revenue();
    const jpy = inCurrency(body, 'JPY');
    // 3000 - 500 + 1000 - 1000 (a refund this month of a payment last month)
    t.like(jpy, { mrr: '0', outstanding: '11000', overdueAmount: '4000', overdueCount: 1, collectedThisMonth: '2500' });
    t.like(jpy.series.at(-1), { collected: '2500' });
    t.like(jpy.series.at(-2), { month: lastMonth.toISOString().slice(0, 7), collected: '10000' });
    t.deepEqual(body.mostOverdue, [
      {
        id: late.invoice.id,
        number: late.invoice.invoice_number,
        customerId: customer.id,
        customerName: 'Late Payer KK',
        currency: 'JPY',
        amountDue: '4000',
        dueDate: late.invoice.due_date!.toISOString(),
      },
    ]);
  },
);

/**
 * The event log's timestamps are the database's clock, which a test cannot move the way the services'
 * `clock.now` and the sweep's `asOf` move theirs: the events a step records are moved to its time,
 * in their order, so the history reads as if it happened then.
 */
async function atTime<T>(db: Knex, when: Date, step: (clock: { now: Date }) => Promise<T>): Promise<T> {
  const since: Date = (await db.raw('select clock_timestamp() as t')).rows[0].t;
  const result = await step({ now: when });
  await db.raw('update events set created_at = ?::timestamptz + (created_at - ?::timestamptz) where created_at >= ?', [
    when,
    since,
    since,
  ]);
  return result;
}

test.serial(
  'movements this month: new, expansion (a bigger plan, a coupon that ran out), contraction, churn (canceled, ' +
    'paused); the series at month ends',
  async (t) => {
    const before = new Date('2025-02-10T12:00:00Z');
    const plan = (price: string) => makePlan(app.db, price, 'monthly', 'GBP');
    const [p10, p20, p30, p45, p50, p35, p5, p40, p750] = await Promise.all(
      ['10.00', '20.00', '30.00', '45.00', '50.00', '35.00', '5.00', '40.00', '7.50'].map(plan),
    );
    const couponCode = (await makeCoupon(app.db, { percentOff: '25', duration: 'repeating', durationInCycles: 2 }))
      .code;
    const start = await atTime(app.db, before, async (clock) => ({
      steady: await subscribe(app.db, p10!, clock),
      churned: await subscribe(app.db, p20!, clock),
      upgraded: await subscribe(app.db, p30!, clock),
      downgraded: await subscribe(app.db, p50!, clock),
      paused: await subscribe(app.db, p5!, clock),
      // 30.00 while the coupon lasts: the renewal of March 10 spends its second and last cycle.
      couponed: await subscribe(app.db, p40!, { ...clock, couponCode }),
    }));
    await atTime(app.db, new Date('2025-03-12T12:00:00Z'), ({ now }) => runLifecycleSweep(app.deps, now));
    await atTime(app.db, new Date('2025-03-14T12:00:00Z'), async (clock) => {
      await updateSubscription(app.db, start.churned.id, { status: 'canceled' }, SYSTEM_ACTOR, clock);
      await updateSubscription(app.db, start.paused.id, { status: 'paused' }, SYSTEM_ACTOR, clock);
      await changePlan(app.db, start.upgraded.id, { newPlanId: p45!.id, prorate: false }, SYSTEM_ACTOR, clock);
      await changePlan(app.db, start.downgraded.id, { newPlanId: p35!.id, prorate: false }, SYSTEM_ACTOR, clock);
    });
    await atTime(app.db, new Date('2025-03-15T12:00:00Z'), (clock) => subscribe(app.db, p750!, clock));

    const metrics = await revenueMetrics(app.db, new Date('2025-03-20T12:00:00Z'));
    const gbp = metrics.currencies.find((c) => c.currency === 'GBP')!;
    t.is(gbp.mrr, '137.50'); // 10 + 45 + 35 + 40 + 7.50
    t.deepEqual(gbp.movements, { new: '7.50', expansion: '25.00', contraction: '15.00', churn: '25.00' });
    t.is(gbp.activeSubscriptions, 5);
    const months = Object.fromEntries(gbp.series.map((m) => [m.month, m.mrr]));
    t.like(months, { '2025-01': '0.00', '2025-02': '145.00', '2025-03': '137.50' }); // Feb: 10 + 20 + 30 + 50 + 5 + 30
    t.is(gbp.series[0]!.month, '2024-04');
  },
);
