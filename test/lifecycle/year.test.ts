/**
 * A year of daily-job time travel through the cron endpoint (D-80, D-81): `asOf` moves forward twice a
 * month and every call waits for its sweep, run by a real lifecycle worker registered on the test's queue.
 */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { recordEvents } from '../../src/events/service.ts';
import { createLicense } from '../../src/licenses/service.ts';
import { money } from '../../src/money.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { createSubscription, updateSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request, type Json } from '../helpers/http.ts';
import { invoicesOf, makePlan, newCustomer } from '../subscriptions/fixtures.ts';
import { at, CRON_SECRET, cron, day, numberingProblems } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp({ CRON_SECRET });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
});
test.after.always(async () => app?.close());

const CREATED = at('2025-01-31T10:00:00.000Z');
const sweepDates = () => {
  const dates: string[] = [];
  for (let m = 1; m <= 12; m++)
    for (const d of ['01', '15'])
      dates.push(`2025-${String(m + 1).padStart(2, '0')}-${d}`.replace('2025-13', '2026-01'));
  dates.push('2026-02-01');
  return dates.map((d) => `${d}T12:00:00.000Z`);
};

async function sub(
  price: string,
  cycle: 'monthly' | 'quarterly' | 'yearly',
  extra: { trialDays?: number; now?: Date } = {},
) {
  const customer = await newCustomer(app.db);
  const plan = await makePlan(app.db, price, cycle);
  const row = await createSubscription(
    app.db,
    { customerId: customer.id, planId: plan.id, billingCycle: cycle, trialDays: extra.trialDays },
    SYSTEM_ACTOR,
    { now: extra.now ?? CREATED },
  );
  return { ...row, customerId: customer.id };
}

const starts = async (id: string) =>
  (await invoicesOf(app.db, id)).map((i) => [day(i.period_start), day(i.period_end)]);

test.serial(
  'a year of sweeps: one invoice per period with anchor-based dates and the plan amount; trial, cancel at period ' +
    'end, pause, catch-up; overdue once; licenses',
  async (t) => {
    const monthly = await sub('10.00', 'monthly');
    const quarterly = await sub('30.00', 'quarterly');
    const yearly = await sub('120.00', 'yearly');
    const trial = await sub('20.00', 'monthly', { trialDays: 14 });
    const canceling = await sub('15.00', 'monthly');
    await updateSubscription(app.db, canceling.id, { cancelAtPeriodEnd: true }, SYSTEM_ACTOR, {
      now: at('2025-02-05'),
    });
    const paused = await sub('12.00', 'monthly');
    await updateSubscription(app.db, paused.id, { status: 'paused' }, SYSTEM_ACTOR, { now: at('2025-02-10') });
    const behind = await sub('9.00', 'monthly', { now: at('2024-10-31T10:00:00.000Z') });
    const product = (
      await app.db('products').insert({ name: 'Licensed', product_type: 'licensed', price: '1' }).returning('id')
    )[0].id;
    const license = await createLicense(
      app.db,
      { customerId: monthly.customerId, productId: product, expiresAt: at('2025-03-01') },
      app.deps.config,
      SYSTEM_ACTOR,
    );

    const summaries: Record<string, Json> = {};
    for (const asOf of sweepDates()) {
      // Resumed between sweeps: the period that ended during the pause restarts at the resume time (D-44).
      if (asOf.startsWith('2025-04-15'))
        await updateSubscription(app.db, paused.id, { status: 'active' }, SYSTEM_ACTOR, { now: at('2025-04-15') });
      const res = await cron(app, { asOf, wait: true });
      t.is(res.status, 200, res.text);
      t.is(res.body.asOf, asOf);
      t.is(res.body.errors, 0, JSON.stringify(res.body));
      summaries[asOf] = res.body;
    }
    // The same day again: nothing new (D-82).
    const again = await cron(app, { asOf: '2026-02-01T12:00:00.000Z', wait: true });
    t.like(again.body, {
      invoicesCreated: 0,
      periodsAdvanced: 0,
      trialsEnded: 0,
      canceled: 0,
      invoicesOverdue: 0,
      licensesExpired: 0,
    });

    // D-43: monthly from Jan 31 clamps to month ends and never drifts.
    t.deepEqual(
      (await starts(monthly.id)).map(([s]) => s),
      [
        '2025-01-31',
        '2025-02-28',
        '2025-03-31',
        '2025-04-30',
        '2025-05-31',
        '2025-06-30',
        '2025-07-31',
        '2025-08-31',
        '2025-09-30',
        '2025-10-31',
        '2025-11-30',
        '2025-12-31',
        '2026-01-31',
      ],
    );
    t.deepEqual(await starts(quarterly.id), [
      ['2025-01-31', '2025-04-30'],
      ['2025-04-30', '2025-07-31'],
      ['2025-07-31', '2025-10-31'],
      ['2025-10-31', '2026-01-31'],
      ['2026-01-31', '2026-04-30'],
    ]);
    t.deepEqual(await starts(yearly.id), [
      ['2025-01-31', '2026-01-31'],
      ['2026-01-31', '2027-01-31'],
    ]);
    for (const [s, price] of [
      [monthly, '10'],
      [quarterly, '30'],
      [yearly, '120'],
    ] as const) {
      const invoices = await invoicesOf(app.db, s.id);
      t.true(
        invoices.every((i) => money(i.total).eq(price) && i.currency === 'USD'),
        `${s.billing_cycle} amounts`,
      );
      const lines = await app.db('invoice_line_items').whereIn(
        'invoice_id',
        invoices.map((i) => i.id),
      );
      t.is(lines.length, invoices.length, 'one line per invoice');
      const now = await app.db('subscriptions').where({ id: s.id }).first();
      t.deepEqual([now.status, day(now.current_period_start)], ['active', day(invoices.at(-1)!.period_start)]);
    }
    // Each renewal invoice is dated at the sweep that made it: the Feb 28 period at the Mar 1 sweep.
    const march = (await invoicesOf(app.db, monthly.id))[1]!;
    t.is(march.created_at.toISOString(), '2025-03-01T12:00:00.000Z');
    t.regex(march.invoice_number, /^INV-2025-\d{4}$/);

    // The trial ended at the Feb 15 sweep: active, first invoice from the trial end, monthly from there.
    t.is(summaries['2025-02-15T12:00:00.000Z'].trialsEnded, 1);
    const trialRow = await app.db('subscriptions').where({ id: trial.id }).first();
    t.is(trialRow.status, 'active');
    const trialInvoices = await starts(trial.id);
    t.is(trialInvoices.length, 12);
    t.deepEqual(trialInvoices[0], ['2025-02-14', '2025-03-14']);

    // Canceled at its period end (Feb 28) by the Mar 1 sweep, without a new invoice.
    const canceledRow = await app.db('subscriptions').where({ id: canceling.id }).first();
    t.is(canceledRow.status, 'canceled');
    t.is(canceledRow.canceled_at.toISOString(), '2025-02-28T10:00:00.000Z');
    t.is((await invoicesOf(app.db, canceling.id)).length, 1);
    t.is(summaries['2025-03-01T12:00:00.000Z'].canceled, 1);
    t.is(
      (await app.db('events').where({ type: 'subscription.canceled' }).whereRaw("data->>'id' = ?", [canceling.id]))
        .length,
      1,
    );

    // Paused across two period ends: nothing while paused; the resume restarts and invoices Apr 15, then monthly.
    const pausedInvoices = await starts(paused.id);
    t.deepEqual(
      pausedInvoices.map(([s]) => s),
      [
        '2025-01-31',
        '2025-04-15',
        '2025-05-15',
        '2025-06-15',
        '2025-07-15',
        '2025-08-15',
        '2025-09-15',
        '2025-10-15',
        '2025-11-15',
        '2025-12-15',
        '2026-01-15',
      ],
    );

    // Three periods behind at the first sweep: caught up once per missed period (D-81).
    const behindInvoices = await invoicesOf(app.db, behind.id);
    const byFirstSweep = behindInvoices
      .filter((i) => i.created_at.toISOString() === '2025-02-01T12:00:00.000Z')
      .map((i) => day(i.period_start));
    t.deepEqual(byFirstSweep, ['2024-11-30', '2024-12-31', '2025-01-31']);
    t.is(behindInvoices.length, 16);

    // Exactly one invoice per (subscription, period) overall, and gapless numbers per year.
    const dupes = await app.db.raw(
      'select subscription_id, period_start, count(*) from invoices where subscription_id is not null group by 1, ' +
        '2 having count(*) > 1',
    );
    t.deepEqual(dupes.rows, []);
    t.deepEqual(await numberingProblems(app.db), []);
    const created = Number((await app.db('events').where({ type: 'invoice.created' }).count('* as n'))[0]!.n);
    t.is(created, Number((await app.db('invoices').count('* as n'))[0]!.n), 'one invoice.created per invoice');

    // Overdue: every issued invoice past its due date by the last sweep, each with invoice.overdue exactly once.
    const lastAsOf = at('2026-02-01T12:00:00.000Z');
    const overdue = await app.db('invoices').where({ status: 'overdue' });
    t.true(overdue.length > 0);
    t.true(overdue.every((i) => i.due_date < lastAsOf));
    t.is(
      Number(
        (await app.db('invoices').where({ status: 'issued' }).where('due_date', '<', lastAsOf).count('* as n'))[0]!.n,
      ),
      0,
    );
    const overdueEvents = await app.db.raw(
      `select data->>'invoiceId' as id, count(*)::int as n from events where type = 'invoice.overdue' group by 1`,
    );
    t.is(overdueEvents.rows.length, overdue.length);
    t.true(overdueEvents.rows.every((r: { n: number }) => r.n === 1));
    const summed = Object.values(summaries).reduce((n, s) => n + s.invoicesOverdue, 0);
    t.is(summed, overdue.length);

    // The license expired by the Mar 1 sweep, stored and announced once.
    t.is((await app.db('licenses').where({ id: license.id }).first()).status, 'expired');
    t.is(summaries['2025-03-01T12:00:00.000Z'].licensesExpired, 1);
    t.is((await app.db('events').where({ type: 'license.expired' })).length, 1);

    // Health: the monthly customer has 12 overdue invoices: floored at 0, stored by the sweep too.
    const read = await request(app.baseUrl, `/api/customers/${monthly.customerId}`, { cookie });
    t.is(read.body.healthScore, 0);
    t.is((await app.db('customers').where({ id: monthly.customerId }).first()).health_score, 0);
  },
);

test.serial(
  'health score (D-22): derived at once after each change, 100 - 25/overdue - 20/past-due - 10/failed payment in ' +
    '90 days',
  async (t) => {
    const customer = await newCustomer(app.db);
    const score = async () =>
      (await request(app.baseUrl, `/api/customers/${customer.id}`, { cookie })).body.healthScore;
    t.is(await score(), 100);
    const plan = await makePlan(app.db, '5.00');
    const s = await createSubscription(
      app.db,
      { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      SYSTEM_ACTOR,
      { now: new Date(Date.now() - 20 * 86_400_000) },
    );
    t.is(await score(), 100, 'an issued invoice not yet past due costs nothing');
    const res = await cron(app, { asOf: new Date().toISOString(), wait: true });
    t.is(res.status, 200, res.text);
    t.is(await score(), 75, 'one overdue invoice');
    await app.db('subscriptions').where({ id: s.id }).update({ status: 'past_due' });
    t.is(await score(), 55, 'and a past-due subscription');
    await app.db.transaction((trx) =>
      recordEvents(trx, [
        { type: 'payment.failed', data: { customerId: customer.id, paymentId: null, amount: '5.00' } },
      ]),
    );
    t.is(await score(), 45, 'and a failed payment');
    const [old] = await app.db.transaction((trx) =>
      recordEvents(trx, [{ type: 'payment.failed', data: { customerId: customer.id } }]),
    );
    await app
      .db('events')
      .where({ id: old!.id })
      .update({ created_at: new Date(Date.now() - 91 * 86_400_000) });
    t.is(await score(), 45, 'a failure older than 90 days does not count');
    const list = await request(app.baseUrl, '/api/customers?limit=500', { cookie });
    t.is(list.body.find((c: { id: string }) => c.id === customer.id).healthScore, 45, 'lists derive it too');
    for (let i = 0; i < 4; i++)
      await app.db.transaction((trx) =>
        recordEvents(trx, [{ type: 'payment.failed', data: { customerId: customer.id } }]),
      );
    t.is(await score(), 5);
    await app.db.transaction((trx) =>
      recordEvents(trx, [{ type: 'payment.failed', data: { customerId: customer.id } }]),
    );
    t.is(await score(), 0, 'never below 0');
    t.is(
      (await app.db('customers').where({ id: customer.id }).first()).health_score,
      75,
      'the stored snapshot is as of the last sweep',
    );
    await cron(app, { wait: true });
    t.is(
      (await app.db('customers').where({ id: customer.id }).first()).health_score,
      0,
      'the sweep refreshes the snapshot',
    );
  },
);
