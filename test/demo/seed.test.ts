/**
 * `npm run demo`'s seed on a database of its own: a believable year of billing, through the services,
 * with gapless invoice numbers; a second run leaves the database alone.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { seedDemo, type DemoSummary } from '../../src/demo/seed.ts';
import { revenueMetrics } from '../../src/metrics/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { countRows, numberingProblems } from '../lifecycle/fixtures.ts';

let app: TestApp;
let summary: DemoSummary;
// Licenses are checked against the real clock, so the demo's year must end now (a fixed hour of today left the
// licenses, created at the real moment, in the book's future whenever the suite ran after that hour).
const now = new Date();
/** When the seed finished: nothing may be stamped later than the seeding itself. */
let seeded: Date;
const DAY_MS = 86_400_000;

test.before(async () => {
  app = await startTestApp();
  const result = await seedDemo(app.deps, { now });
  if (result.status !== 'seeded') throw new Error('expected a fresh database to be seeded');
  summary = result.summary;
  seeded = new Date();
});
test.after.always(async () => app?.close());

const count = (table: string, where?: (q: Knex.QueryBuilder) => void) => countRows(app.db, table, where);

test('about forty customers, one with quotes and an ampersand, in three tiers', async (t) => {
  t.is(await count('customers'), 40);
  t.is(summary.customers, 40);
  t.is(await count('customers', (q) => q.where('company', 'like', '%&%"%')), 1);
  const tiers = await app.db('customers').distinct('tier').pluck('tier');
  t.deepEqual(tiers.sort(), ['enterprise', 'professional', 'starter']);
});

test('a catalog of four products with monthly, quarterly and yearly plans, one in EUR, and two coupons', async (t) => {
  t.is(await count('products'), 4);
  const plans = await app.db('plans').select('billing_cycle', 'currency');
  t.deepEqual([...new Set(plans.map((p) => p.billing_cycle))].sort(), ['monthly', 'quarterly', 'yearly']);
  t.true(plans.some((p) => p.currency === 'EUR'));
  t.is(await count('coupons'), 2);
  t.true((await count('subscriptions', (q) => q.whereNotNull('coupon_id'))) >= 3);
});

test('invoices over twelve months, gaplessly numbered, most paid and a few overdue', async (t) => {
  const invoices = await count('invoices');
  t.true(invoices >= 200, `${invoices} invoices`);
  const { first, last } = (await app.db('invoices').min('created_at as first').max('created_at as last').first()) as {
    first: Date;
    last: Date;
  };
  t.true(now.getTime() - first.getTime() > 330 * DAY_MS, `first invoice ${first.toISOString()}`);
  t.true(now.getTime() - last.getTime() < 8 * DAY_MS, `last invoice ${last.toISOString()}`);
  const months = await app.db.raw(`select count(distinct to_char(created_at, 'YYYY-MM')) as n from invoices`);
  t.true(Number(months.rows[0].n) >= 12);
  t.deepEqual(await numberingProblems(app.db), []);
  const overdue = await count('invoices', (q) => q.where({ status: 'overdue' }));
  t.true(overdue >= 3 && overdue <= invoices / 10, `${overdue} overdue`);
  t.true((await count('invoices', (q) => q.where({ status: 'paid' }))) > invoices * 0.7);
  t.is(await count('invoices', (q) => q.where({ status: 'void' })), 1);
  t.true((await count('invoices', (q) => q.where({ currency: 'EUR' }))) > 10);
});

test(
  'payments by several methods, some with provider references; ' + 'refunds, credit notes and store credit',
  async (t) => {
    const payments = await count('payments');
    t.is(payments, summary.payments);
    t.true(payments >= 250, `${payments} payments`);
    const methods = await app.db('payments').distinct('payment_method').pluck('payment_method');
    t.true(methods.includes('bank_transfer') && methods.includes('manual'), methods.join());
    t.true((await count('payments', (q) => q.whereNotNull('provider_reference'))) > 10);
    t.true((await count('refunds')) >= 3);
    t.true((await count('credit_notes')) >= 3);
    t.true((await count('credit_ledger', (q) => q.where({ kind: 'credit' }))) >= 3);
  },
);

test(
  'subscriptions in every state: ' + 'active, trialing, paused, canceled, cancel at period end, plan changes',
  async (t) => {
    const statuses = await app.db('subscriptions').distinct('status').pluck('status');
    for (const status of ['active', 'trialing', 'paused', 'canceled'])
      t.true(statuses.includes(status), `${status} in ${statuses.join()}`);
    t.true((await count('subscriptions', (q) => q.where({ cancel_at_period_end: true, status: 'active' }))) >= 1);
    t.true(summary.planChanges >= 4, `${summary.planChanges} plan changes`);
  },
);

test('licenses with device activations, and a webhook endpoint whose deliveries are waiting to fail', async (t) => {
  t.true((await count('licenses')) >= 3);
  t.true((await count('license_activations')) >= 3);
  t.is(summary.activations, await count('license_activations'));
  t.is(await count('webhook_endpoints'), 1);
  t.true((await count('webhook_deliveries')) > 0);
});

/** In how many calendar months (UTC) the rows of `table` were stamped by `column`. */
async function monthsOf(table: string, column = 'created_at'): Promise<number> {
  const { rows } = await app.db.raw(`select count(distinct to_char(??, 'YYYY-MM')) as n from ??`, [column, table]);
  return Number(rows[0].n);
}

test('the book is dated as it happened: customers, subscriptions, invoices, payments, events', async (t) => {
  // The walk-through: "the demo book's records are all created at the seeding moment, so timelines are flat".
  // Forty customers sign up over the year, the rest happens every month.
  for (const [table, months] of [
    ['customers', 8],
    ['subscriptions', 11],
    ['invoices', 12],
    ['payments', 12],
    ['events', 12],
  ] as const)
    t.true((await monthsOf(table)) >= months, `${table} stamped in ${await monthsOf(table)} months`);
  t.true((await monthsOf('payments', 'received_at')) >= 11);
  const late = await app.db.raw(
    `select count(*)::int as n from customers c
      where c.created_at > (select min(s.created_at) from subscriptions s where s.customer_id = c.id)`,
  );
  t.is(late.rows[0].n, 0, 'every customer signed up before its first subscription');
  const stampedLater = await count('events', (q) => q.where('created_at', '>', seeded));
  t.is(stampedLater, 0, 'no event stamped after the seeding');
  // A customer's timeline spans months, not one moment.
  const spans = await app.db.raw(
    `select max(created_at) - min(created_at) > interval '60 days' as spread from events
      where data->>'customerId' is not null group by data->>'customerId'`,
  );
  t.true(spans.rows.filter((r: { spread: boolean }) => r.spread).length >= 20);
  // The overview's chart: MRR grows over the year instead of appearing in its last month.
  const usd = (await revenueMetrics(app.db, now)).currencies.find((c) => c.currency === 'USD')!;
  const rising = usd.series.filter((m) => !/^0(\.0+)?$/.test(m.mrr)).length;
  t.true(rising >= 11, `MRR above zero in ${rising} of ${usd.series.length} months`);
});

test('a second run sees the demo and adds nothing', async (t) => {
  const before = await count('invoices');
  t.deepEqual(await seedDemo(app.deps, { now }), { status: 'already_seeded' });
  t.is(await count('invoices'), before);
  t.is(await count('customers'), 40);
});

test('without LIFECYCLE_ALLOW_AS_OF the demo refuses (it moves the sweep in time) and writes nothing', async (t) => {
  const before = [await count('customers'), await count('invoices'), await count('lifecycle_runs')];
  const off = { ...app.deps, config: { ...app.deps.config, LIFECYCLE_ALLOW_AS_OF: false } };
  await t.throwsAsync(seedDemo(off, { now }), { message: /LIFECYCLE_ALLOW_AS_OF=true/ });
  t.deepEqual([await count('customers'), await count('invoices'), await count('lifecycle_runs')], before);
});
