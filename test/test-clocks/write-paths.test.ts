/**
 * Issue 39, TC-2: every write for a clock customer runs at the clock's time, not the wall clock's: a subscription's
 * trial ended early, a plan change (its proration invoice), a cancellation, a payment and a credit note, each after
 * the clock was advanced, are dated by the clock's new `frozenTime`; the credit note is numbered `TCN`. A payment
 * received "later" than the clock's time (in the past by the wall clock) is refused as in the future, recording
 * nothing.
 */
import test from 'ava';
import type { TestApp } from '../helpers/app.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { advance, api, clockCustomer, createClock, subscribe, startClockApp } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  ({ app, cookie } = await startClockApp());
});
test.after.always(async () => app?.close());

const T0 = '2026-01-01T10:00:00.000Z';
/** The clock's time after its advance: every write below is dated by it. */
const T1 = '2026-01-10T10:00:00.000Z';
const iso = (d: Date | null) => d?.toISOString() ?? null;

test.serial('updates, plan changes, cancellations, payments and credit notes of a clock customer', async (t) => {
  const basic = await makePlan(app.db, '29.00', 'monthly');
  const pro = await makePlan(app.db, '49.00', 'monthly');
  const clock = await createClock(app, cookie, T0);
  const customer = await clockCustomer(app, cookie, clock.id);
  const trial = await subscribe(app, cookie, customer.id, basic, { trialDays: 30 });
  const paid = await subscribe(app, cookie, customer.id, basic);
  t.like(await advance(app, cookie, clock.id, T1), { status: 'ready', frozenTime: T1 });

  // The trial ended early: the first period starts at the clock's time and is invoiced then.
  const ended = await api(app, cookie, `/api/billing/subscriptions/${trial.id}`, {
    method: 'PUT',
    body: { status: 'active' },
  });
  t.is(ended.status, 200, ended.text);
  t.like(ended.body, { status: 'active', trialEnd: T1, currentPeriodStart: T1 });
  const trialInvoice = await app.db('invoices').where({ subscription_id: trial.id }).first();
  t.is(iso(trialInvoice.issued_at), T1);
  t.is(iso(trialInvoice.period_start), T1);

  // A plan change prorated at the clock's time.
  const changed = await api(app, cookie, `/api/billing/subscriptions/${paid.id}/change-plan`, {
    body: { newPlanId: pro.id, prorate: true },
  });
  t.is(changed.status, 200, changed.text);
  const invoices = await app.db('invoices').where({ subscription_id: paid.id }).orderBy('issued_at');
  t.deepEqual(
    invoices.map((i) => iso(i.issued_at)),
    [T0, T1],
    'the first period at the creation, the proration at the clock time',
  );
  t.true(invoices.every((i) => i.invoice_number.startsWith('TST-')));

  // Paid by hand, then credited, at the clock's time.
  const proration = invoices[1]!;
  const payment = await api(app, cookie, '/api/billing/payments', {
    body: { invoiceId: proration.id, amount: '5.00', paymentMethod: 'bank_transfer' },
  });
  t.is(payment.status, 201, payment.text);
  t.is(payment.body.receivedAt, T1);
  t.is(iso((await app.db('payments').where({ id: payment.body.id }).first()).created_at), T1);
  const note = await api(app, cookie, '/api/billing/credit-notes', {
    body: { invoiceId: proration.id, amount: '1.00', reason: 'goodwill' },
  });
  t.is(note.status, 201, note.text);
  t.regex(note.body.number, /^TCN-2026-\d{4}$/, 'numbered apart from the real credit notes');
  t.is((await app.db('document_counters').where({ kind: 'CN' })).length, 0, 'the real CN sequence untouched');
  t.is(iso((await app.db('credit_notes').where({ id: note.body.id }).first()).created_at), T1);

  // Canceled now: at the clock's time.
  const canceled = await api(app, cookie, `/api/billing/subscriptions/${paid.id}`, {
    method: 'PUT',
    body: { status: 'canceled' },
  });
  t.is(canceled.status, 200, canceled.text);
  t.like(canceled.body, { status: 'canceled', canceledAt: T1 });
});

test.serial("a payment received after the clock's time is refused and records nothing", async (t) => {
  const plan = await makePlan(app.db, '10.00', 'monthly');
  const clock = await createClock(app, cookie, T0);
  const customer = await clockCustomer(app, cookie, clock.id);
  const sub = await subscribe(app, cookie, customer.id, plan);
  const invoice = await app.db('invoices').where({ subscription_id: sub.id }).first();
  // In the past by the wall clock, in the future by the customer's clock.
  const res = await api(app, cookie, '/api/billing/payments', {
    body: { invoiceId: invoice.id, amount: '10.00', paymentMethod: 'bank_transfer', receivedAt: '2026-02-01' },
  });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.details[0].path, 'receivedAt');
  t.is((await app.db('payments').where({ invoice_id: invoice.id })).length, 0);
  t.is((await app.db('invoices').where({ id: invoice.id }).first()).status, 'issued');
});
