/**
 * Issue 39, TC-3: the lifecycle worker running a test clock's advance is SIGKILLed mid-way; a new worker picks the
 * job up again (pg-boss fails it once its heartbeat stops, and retries it) and resumes at the last moment whose steps
 * committed. The advance finishes with nothing done twice: every period invoiced once, every invoice charged and paid
 * once, one invoice.created and one invoice.paid per invoice, the clock's invoice numbers gapless.
 */
import test from 'ava';
import { killAll, startWorker, waitUntil } from '../faults/processes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { api, clockCustomer, createClock, subscribe, waitForClock } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => {
  await killAll();
  await app?.close();
});

const CUSTOMERS = 40;
const MONTHS = 12;

const count = async (sql: string, bindings: (string | string[])[]) =>
  Number((await app.db.raw(sql, bindings)).rows[0].n);

test('a worker SIGKILLed mid-advance: the advance finishes on restart, nothing done twice', async (t) => {
  t.timeout(240_000);
  const plan = await makePlan(app.db, '20.00', 'monthly');
  const clock = await createClock(app, cookie, '2026-01-01T00:00:00.000Z');
  const subs: string[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const customer = await clockCustomer(app, cookie, clock.id, 'pm_card_visa');
    subs.push((await subscribe(app, cookie, customer.id, plan)).id);
  }
  const invoicesOfClock = () =>
    count(
      `select count(*)::int as n from invoices i join customers c on c.id = i.customer_id where c.test_clock_id = ?`,
      [clock.id],
    );
  const expected = CUSTOMERS * (MONTHS + 1);

  const first = await startWorker('lifecycle', app.database.url, { LOG_LEVEL: 'warn' });
  const res = await api(app, cookie, `/api/billing/test-clocks/${clock.id}/advance`, {
    body: { frozenTime: '2027-01-01T00:00:00.000Z' },
  });
  t.is(res.status, 202);
  await waitUntil(async () => (await invoicesOfClock()) >= CUSTOMERS * 4, 120_000, 'a few months renewed');
  await first.kill();
  const atKill = await invoicesOfClock();
  const clockAtKill = (await api(app, cookie, `/api/billing/test-clocks/${clock.id}`)).body;
  t.log(`killed with ${atKill} of ${expected} invoices, clock ${clockAtKill.status}`);
  t.is(clockAtKill.status, 'advancing', 'killed mid-way');
  t.true(atKill < expected);

  const second = await startWorker('lifecycle', app.database.url, { LOG_LEVEL: 'warn' });
  const done = await waitForClock(app, cookie, clock.id, 180_000);
  t.like(done, { status: 'ready', frozenTime: '2027-01-01T00:00:00.000Z' });

  t.is(await invoicesOfClock(), expected, 'each period invoiced once');
  const perSub = await app
    .db('invoices')
    .whereIn('subscription_id', subs)
    .groupBy('subscription_id', 'period_start')
    .havingRaw('count(*) > 1')
    .select('subscription_id');
  t.deepEqual(perSub, []);
  const ids = (await app.db('invoices').whereIn('subscription_id', subs).select('id')).map((r) => r.id);
  t.is(await count(`select count(*)::int as n from payments where invoice_id = any(?)`, [ids]), expected, 'paid once');
  t.is(await count(`select count(*)::int as n from charge_attempts where invoice_id = any(?)`, [ids]), expected);
  t.is(await count(`select count(*)::int as n from invoices where id = any(?) and status <> 'paid'`, [ids]), 0);
  for (const type of ['invoice.created', 'invoice.paid'])
    t.is(
      await count(`select count(*)::int as n from events where type = ? and (data->>'invoiceId') = any(?)`, [
        type,
        ids,
      ]),
      expected,
      `one ${type} per invoice`,
    );
  const byYear = new Map<string, number[]>();
  for (const { invoice_number } of await app.db('invoices').whereIn('id', ids).select('invoice_number')) {
    const [, year, seq] = /^TST-(\d{4})-(\d+)$/.exec(invoice_number)!;
    byYear.set(year!, [...(byYear.get(year!) ?? []), Number(seq)]);
  }
  for (const [year, seqs] of byYear)
    t.deepEqual(
      seqs.sort((a, b) => a - b),
      Array.from({ length: seqs.length }, (_, k) => k + 1),
      `TST-${year}: numbers gapless, none twice`,
    );
  await second.stop();
});
