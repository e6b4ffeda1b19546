import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { money } from '../../src/money.ts';
import { changePlan, previewPlanChange } from '../../src/subscriptions/change-plan.ts';
import { renewLockedSubscriptions, renewSubscription } from '../../src/subscriptions/renew.ts';
import { lockSubscription, updateSubscription } from '../../src/subscriptions/service.ts';
import { ingestEvents } from '../../src/usage-api/ingest.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { balanceOf, invoicesOf, linesOf } from '../subscriptions/fixtures.ts';
import { DAY, makeMetric, makeUsagePlan, subscribe, txId } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const ago = (days: number) => new Date(Date.now() - days * DAY);

async function send(customerId: string, metric: string, at: Date, value?: number | string) {
  const [result] = await ingestEvents(app.db, [
    {
      customerId,
      transactionId: txId(),
      metric,
      timestamp: at,
      ...(value === undefined ? {} : { properties: { value } }),
    },
  ]);
  if (result!.status !== 'accepted') throw new Error(JSON.stringify(result));
}

const GRADUATED = [
  { upTo: '10', unitPrice: '1' },
  { upTo: null, unitPrice: '0.5', flatFee: '2' },
];

/** A hybrid plan (10.00 a month) with a graduated count charge; a customer subscribed 40 days ago. */
async function world() {
  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'graduated', tiers: GRADUATED }], '10.00');
  const { customer, sub } = await subscribe(app.db, plan.id, ago(40));
  return { metric, plan, customer, sub };
}

test("U-10/U-11: the renewal invoice bills the next period and the closed period's usage, once", async (t) => {
  const w = await world();
  for (let i = 0; i < 15; i++) await send(w.customer.id, w.metric.code, ago(30));
  await renewSubscription(app.db, w.sub.id, new Date());
  await renewSubscription(app.db, w.sub.id, new Date());
  const invoices = await invoicesOf(app.db, w.sub.id);
  t.is(invoices.length, 2);
  const lines = await linesOf(app.db, invoices[1].id);
  t.is(lines.length, 2);
  const usage = lines[1];
  const day = (d: Date) => d.toISOString().slice(0, 10);
  t.is(usage.description, `${w.metric.name} (${day(w.sub.current_period_start)} to ${day(w.sub.current_period_end)})`);
  t.is(usage.quantity, 1);
  t.true(money(usage.amount).eq('14.5'));
  t.true(money(usage.unit_price).eq('14.5'));
  t.like(usage.usage, {
    metricCode: w.metric.code,
    aggregation: 'count',
    quantity: '15',
    periodStart: w.sub.current_period_start.toISOString(),
    periodEnd: w.sub.current_period_end.toISOString(),
  });
  t.deepEqual(usage.usage.tiers, [
    { upTo: '10', units: '10', unitPrice: '1', flatFee: '0', amount: '10' },
    { upTo: null, units: '5', unitPrice: '0.5', flatFee: '2', amount: '4.5' },
  ]);
  t.true(money(invoices[1].total).eq('24.5'));
  // The API answers the line's usage (U-11); invoice.created is the invoice's, its amount with the usage (U-13).
  const api = await request(app.baseUrl, `/api/billing/invoices/${invoices[1].id}`, { cookie });
  t.is(api.body.lineItems[1].usage.quantity, '15');
  const created = await app
    .db('events')
    .where({ type: 'invoice.created' })
    .whereRaw("data->>'invoiceId' = ?", [invoices[1].id]);
  t.is(created.length, 1);
  t.is(created[0].data.amount, '24.50');
  t.is(await app.db('events').where({ type: 'usage.recorded' }).first(), undefined);
  // A closed period's usage is read by its start.
  const past = await request(
    app.baseUrl,
    `/api/billing/subscriptions/${w.sub.id}/usage?periodStart=${w.sub.current_period_start.toISOString()}`,
    { cookie },
  );
  t.is(past.status, 200, past.text);
  t.is(past.body.charges[0].quantity, '15');
  t.is(past.body.amount, '14.50');
});

test('U-12: a late event is billed once as an adjustment, also when the sweep runs twice or is killed', async (t) => {
  const w = await world();
  for (let i = 0; i < 12; i++) await send(w.customer.id, w.metric.code, ago(30));
  await renewSubscription(app.db, w.sub.id, new Date());
  // Late: two more events in the closed period (12 -> 14: 12.00 + 2 -> 13.00 + 2).
  await send(w.customer.id, w.metric.code, ago(15));
  await send(w.customer.id, w.metric.code, ago(16));
  const [, second] = await invoicesOf(app.db, w.sub.id);
  const sent = await linesOf(app.db, second.id);
  t.true(money(sent[1].amount).eq('13'));
  const next = new Date(Date.now() + 25 * DAY);
  // A sweep killed mid-run: the batch's transaction rolls back and bills nothing.
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      const sub = (await lockSubscription(trx, w.sub.id))!;
      await renewLockedSubscriptions(trx, [sub], next, {});
      throw new Error('killed');
    }),
    { message: 'killed' },
  );
  t.is((await invoicesOf(app.db, w.sub.id)).length, 2);
  t.is(Number((await app.db('usage_billings').where({ invoice_id: second.id }).count('* as n'))[0]!.n), 1);
  await renewSubscription(app.db, w.sub.id, next);
  await renewSubscription(app.db, w.sub.id, next);
  const invoices = await invoicesOf(app.db, w.sub.id);
  t.true(invoices.length >= 3);
  const later = (await Promise.all(invoices.slice(2).map((i) => linesOf(app.db, i.id)))).flat();
  const adjustments = later.filter((l) => l.description.startsWith('Usage adjustment:'));
  t.is(adjustments.length, 1);
  t.true(money(adjustments[0].amount).eq('1'));
  t.like(adjustments[0].usage, { quantity: '14', adjustment: { billedQuantity: '12', billedAmount: '13' } });
  // The sent invoice did not change.
  t.deepEqual(
    (await linesOf(app.db, second.id)).map((l) => l.amount),
    sent.map((l) => l.amount),
  );
  await renewSubscription(app.db, w.sub.id, new Date(Date.now() + 60 * DAY));
  const all = await Promise.all((await invoicesOf(app.db, w.sub.id)).map((i) => linesOf(app.db, i.id)));
  t.is(all.flat().filter((l) => l.description.startsWith('Usage adjustment:')).length, 1);
});

test('U-12: a negative adjustment the invoice cannot absorb becomes store credit', async (t) => {
  const metric = await makeMetric(app.db, 'sum');
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '1' }]);
  const { customer, sub } = await subscribe(app.db, plan.id, ago(40));
  await send(customer.id, metric.code, ago(30), '100');
  await renewSubscription(app.db, sub.id, new Date());
  await send(customer.id, metric.code, ago(15), '-40');
  await renewSubscription(app.db, sub.id, new Date(Date.now() + 25 * DAY));
  const invoices = await invoicesOf(app.db, sub.id);
  const last = invoices.at(-1);
  const lines = await linesOf(app.db, last.id);
  const adjustment = lines.find((l) => l.description.startsWith('Usage adjustment:'));
  t.truthy(adjustment);
  t.true(money(adjustment.amount).eq(-40), 'a negative adjustment is a negative line');
  const carried = lines.find((l) => l.description.startsWith('To your credit balance:'));
  t.true(money(carried.amount).eq(40), 'what the invoice cannot absorb is carried to store credit');
  t.true(money(last.total).eq(0));
  t.true(money(await balanceOf(app.db, customer.id)).eq('40'));
});

test("U-10: a cancellation at period end gets a final invoice with the last period's usage", async (t) => {
  const w = await world();
  await renewSubscription(app.db, w.sub.id, new Date());
  const [, periodOne] = await invoicesOf(app.db, w.sub.id);
  for (let i = 0; i < 3; i++) await send(w.customer.id, w.metric.code, ago(1));
  await updateSubscription(app.db, w.sub.id, { cancelAtPeriodEnd: true }, SYSTEM_ACTOR);
  const result = await renewSubscription(app.db, w.sub.id, new Date(Date.now() + 40 * DAY));
  t.is(result.canceled, 1);
  const invoices = await invoicesOf(app.db, w.sub.id);
  t.is(invoices.length, 3);
  const final = invoices[2];
  t.is(final.period_start, null);
  const lines = await linesOf(app.db, final.id);
  t.is(lines.length, 1);
  t.is(lines[0].usage.quantity, '3');
  t.is(lines[0].usage.periodStart, periodOne.period_start.toISOString());
  t.true(money(final.total).eq('3'));
  await renewSubscription(app.db, w.sub.id, new Date(Date.now() + 80 * DAY));
  t.is((await invoicesOf(app.db, w.sub.id)).length, 3);
});

test("U-10: a plan change bills the old plan's usage to it; the new plan's charges count from it", async (t) => {
  const w = await world();
  const other = await makeUsagePlan(app.db, [{ metricId: w.metric.id, model: 'per_unit', unitPrice: '2' }], '10.00');
  await renewSubscription(app.db, w.sub.id, new Date());
  for (let i = 0; i < 4; i++) await send(w.customer.id, w.metric.code, ago(1));
  await changePlan(app.db, w.sub.id, { newPlanId: other.id, prorate: false }, SYSTEM_ACTOR);
  const invoices = await invoicesOf(app.db, w.sub.id);
  t.is(invoices.length, 3);
  const lines = await linesOf(app.db, invoices[2].id);
  t.is(lines.length, 1);
  t.is(lines[0].usage.quantity, '4');
  t.true(money(lines[0].amount).eq('4'));
  await send(w.customer.id, w.metric.code, new Date());
  const usage = (await request(app.baseUrl, `/api/billing/subscriptions/${w.sub.id}/usage`, { cookie })).body;
  const byCharge = Object.fromEntries(
    usage.charges.map((c: { chargeId: string; quantity: string }) => [c.chargeId, c.quantity]),
  );
  t.is(byCharge[other.charges![0]!.id], '1');
  t.is(byCharge[w.plan.charges![0]!.id], '4');
  await renewSubscription(app.db, w.sub.id, new Date(Date.now() + 40 * DAY));
  const renewal = (await invoicesOf(app.db, w.sub.id))[3];
  const renewalLines = await linesOf(app.db, renewal.id);
  const usageLines = renewalLines.filter((l) => l.usage);
  t.is(usageLines.length, 1);
  t.is(usageLines[0].usage.chargeId, other.charges![0]!.id);
  t.true(money(usageLines[0].amount).eq('2'));
});

/** A customer 40 days into a usage plan taxed at 19% (10.00 a unit), its first period invoiced, one unit used since. */
async function taxedUsageWorld(rateName: string) {
  const rate = await request(app.baseUrl, '/api/billing/tax-rates', {
    cookie,
    body: { name: rateName, percentage: '19', inclusive: false },
  });
  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '10' }], '0', [
    rate.body.id,
  ]);
  const { customer, sub } = await subscribe(app.db, plan.id, ago(40));
  await renewSubscription(app.db, sub.id, new Date());
  await send(customer.id, metric.code, ago(1));
  return { rateId: rate.body.id as string, metric, sub };
}

test("T-2: a plan change taxes the old plan's usage with the old plan's rates, not the new plan's", async (t) => {
  const { rateId, metric, sub } = await taxedUsageWorld('VAT old plan');
  const untaxed = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '1' }], '0');
  await changePlan(app.db, sub.id, { newPlanId: untaxed.id, prorate: false }, SYSTEM_ACTOR);
  const change = (await invoicesOf(app.db, sub.id)).at(-1);
  const [line] = await linesOf(app.db, change.id);
  t.true(money(line.amount).eq('10'));
  t.deepEqual(line.tax_rate_ids, [rateId]);
  t.true(money(change.tax_amount).eq('1.9'));
  t.true(money(change.total).eq('11.9'));
});

test("U-12: a late event from before a plan change counts under the old plan's charge, at its price", async (t) => {
  const w = await world();
  const extra = await makeMetric(app.db);
  const other = await makeUsagePlan(
    app.db,
    [
      { metricId: w.metric.id, model: 'per_unit', unitPrice: '2' },
      { metricId: extra.id, model: 'per_unit', unitPrice: '3' },
    ],
    '10.00',
  );
  await renewSubscription(app.db, w.sub.id, new Date());
  for (let i = 0; i < 4; i++) await send(w.customer.id, w.metric.code, ago(1));
  await changePlan(app.db, w.sub.id, { newPlanId: other.id, prorate: false }, SYSTEM_ACTOR);
  // Arrives after the change, dated before it: the old charge's usage, not the new plan's.
  await send(w.customer.id, w.metric.code, ago(1));
  const [before] = await ingestEvents(app.db, [
    { customerId: w.customer.id, transactionId: txId(), metric: extra.code, timestamp: ago(1) },
  ]);
  t.is(before!.status, 'rejected');
  t.is(before!.error!.code, 'no_matching_charge');
  const usage = (await request(app.baseUrl, `/api/billing/subscriptions/${w.sub.id}/usage`, { cookie })).body;
  const byCharge = Object.fromEntries(
    usage.charges.map((c: { chargeId: string; quantity: string }) => [c.chargeId, c.quantity]),
  );
  t.is(byCharge[w.plan.charges![0]!.id], '5');
  t.is(byCharge[other.charges![0]!.id], '0');
  await renewSubscription(app.db, w.sub.id, new Date(Date.now() + 40 * DAY));
  const renewal = (await invoicesOf(app.db, w.sub.id))[3];
  const adjustments = (await linesOf(app.db, renewal.id)).filter((l) => l.usage?.adjustment);
  t.is(adjustments.length, 1);
  t.is(adjustments[0].usage.chargeId, w.plan.charges![0]!.id);
  t.regex(adjustments[0].description, /^Usage adjustment: /);
  // The old graduated charge: 5 units at 1.00 against 4 billed, not the new plan's 2.00 a unit.
  t.true(money(adjustments[0].amount).eq('1'));
});

test("U-10: the change-plan preview shows the old plan's usage, as the change then bills it", async (t) => {
  const w = await world();
  const other = await makeUsagePlan(app.db, [{ metricId: w.metric.id, model: 'per_unit', unitPrice: '2' }], '10.00');
  await renewSubscription(app.db, w.sub.id, new Date());
  for (let i = 0; i < 12; i++) await send(w.customer.id, w.metric.code, ago(1));
  const input = { newPlanId: other.id, prorate: false };
  const preview = await previewPlanChange(app.db, w.sub.id, input);
  t.is(preview.charge, null);
  const usageLines = preview.invoiceLines.filter((l) => l.usage);
  t.is(usageLines.length, 1);
  t.is((usageLines[0]!.usage as { quantity: string }).quantity, '12');
  // Graduated: 10 at 1.00, then 2 at 0.50 and the tier's flat fee of 2.00.
  t.true(money(preview.chargeTotals!.subtotal).eq('13'));
  await changePlan(app.db, w.sub.id, { ...input, prorationDate: preview.at }, SYSTEM_ACTOR);
  const issued = (await invoicesOf(app.db, w.sub.id))[2];
  t.true(money(issued.total).eq(preview.chargeTotals!.total));
});

test("U-8: a trial's usage is billed at 0 on the invoice that ends it", async (t) => {
  const metric = await makeMetric(app.db);
  const plan = await makeUsagePlan(app.db, [{ metricId: metric.id, model: 'per_unit', unitPrice: '1' }], '5.00');
  const { customer, sub } = await subscribe(app.db, plan.id, ago(20), 14);
  await send(customer.id, metric.code, ago(10));
  await renewSubscription(app.db, sub.id, new Date());
  const [invoice] = await invoicesOf(app.db, sub.id);
  const lines = await linesOf(app.db, invoice.id);
  const usage = lines.find((l) => l.usage);
  t.true(money(usage.amount).eq(0));
  t.is(usage.usage.quantity, '1');
  t.true(money(invoice.total).eq('5'));
  // The closed trial period read afterwards, a late event of the trial in it, still prices at 0 (U-8, U-9).
  await send(customer.id, metric.code, ago(9));
  const trialStart = usage.usage.periodStart;
  const read = await request(app.baseUrl, `/api/billing/subscriptions/${sub.id}/usage?periodStart=${trialStart}`, {
    cookie,
  });
  t.is(read.status, 200);
  t.is(read.body.charges[0].quantity, '2');
  t.is(read.body.amount, '0.00');
});

test("T-2: the final invoice of a cancellation at period end is taxed with the plan's rates", async (t) => {
  const { sub } = await taxedUsageWorld('VAT final');
  await updateSubscription(app.db, sub.id, { cancelAtPeriodEnd: true }, SYSTEM_ACTOR);
  await renewSubscription(app.db, sub.id, new Date(Date.now() + 40 * DAY));
  const final = (await invoicesOf(app.db, sub.id)).at(-1);
  t.is(final.period_start, null, 'the final invoice');
  t.true(money(final.subtotal).eq('10'));
  t.true(money(final.tax_amount).eq('1.9'));
  t.true(money(final.total).eq('11.9'));
});
