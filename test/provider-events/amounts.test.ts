/**
 * An amount a provider cannot have taken (finer than its currency, zero, negative) is a permanent problem:
 * the event is `failed` on its first attempt with the reason, never retried with backoff, and nothing is
 * recorded or rounded into the books.
 */
import test from 'ava';
import { applyProviderEventHandler } from '../../src/provider-events/apply-event.handler.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { PROVIDER_SECRETS, providerAEvent, providerBPaid, providerCEvent } from '../helpers/provider-events.ts';
import { adminCtx, makeInvoice, readInvoice, type Ctx } from '../payments/fixtures.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp({ ...PROVIDER_SECRETS });
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

type StoredRow = { id: string; status: string; failure_reason: string | null; attempts: number };

/** Stores the event as the acknowledgement does, then runs the queue's first attempt at it (retryCount 0). */
async function firstAttempt(
  provider: string,
  eventId: string,
  eventType: string,
  payload: unknown,
): Promise<{ outcome: unknown; row: StoredRow }> {
  const [stored] = await app
    .db('provider_events')
    .insert({ provider, event_id: eventId, event_type: eventType, payload: JSON.stringify(payload) })
    .returning('id');
  // A throw here is what pg-boss retries (10 times, with backoff): a permanent problem must not throw.
  const outcome = await applyProviderEventHandler.run(
    app.deps,
    { eventId: stored.id },
    { jobId: `first-${stored.id}`, retryCount: 0 },
  );
  return { outcome, row: await app.db('provider_events').where({ id: stored.id }).first() };
}

const moneyRows = async (invoiceId: string, customerId: string) => ({
  payments: (await app.db('payments').where({ invoice_id: invoiceId })).length,
  credits: (await app.db('credit_ledger').where({ customer_id: customerId })).length,
  providerCredits: (await app.db('provider_credits').where({ invoice_id: invoiceId })).length,
});

test(
  'provider_b invoices.paid with paid_amount "10.005" ' + 'USD is failed on its first attempt, nothing recorded',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '10.01' });
    const event = providerBPaid(invoice.id, '10.005', 'USD');
    const { outcome, row } = await firstAttempt('provider_b', event.id, event.event, event);
    t.deepEqual(outcome, { status: 'failed' });
    t.is(row.status, 'failed');
    t.is(row.attempts, 1);
    t.is(row.failure_reason, 'paid_amount 10.005 has more decimals than USD has (2)');
    t.deepEqual(await moneyRows(invoice.id, invoice.customerId), { payments: 0, credits: 0, providerCredits: 0 });
    t.is((await readInvoice(c, invoice.id)).status, 'issued');
  },
);

test('on an invoice already paid, a finer amount is not rounded into store credit', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  t.is(
    await app
      .db('invoices')
      .where({ id: invoice.id })
      .update({ status: 'paid', amount_paid: '10.00', paid_at: new Date() }),
    1,
  );
  const event = providerBPaid(invoice.id, '10.005', 'USD');
  const { row } = await firstAttempt('provider_b', event.id, event.event, event);
  t.is(row.status, 'failed');
  t.deepEqual(await moneyRows(invoice.id, invoice.customerId), { payments: 0, credits: 0, providerCredits: 0 });
});

test('zero, negative and sub-yen amounts, from every provider, are failed at once with the reason', async (t) => {
  const usd = await makeInvoice(c, { unitPrice: '5.00' });
  const jpy = await makeInvoice(c, { unitPrice: '500', currency: 'JPY' });
  const cases: [string, string, string, unknown, RegExp][] = [];
  const zeroB = providerBPaid(usd.id, '0.00', 'USD');
  cases.push([
    'provider_b',
    zeroB.id,
    zeroB.event,
    zeroB,
    /^paid_amount 0\.00 USD is not an amount paid: it must be above zero$/,
  ]);
  const negativeB = providerBPaid(usd.id, '-5.00', 'USD');
  cases.push(['provider_b', negativeB.id, negativeB.event, negativeB, /^paid_amount -5\.00 USD is not an amount paid/]);
  const fineYen = providerBPaid(jpy.id, '499.5', 'JPY');
  cases.push([
    'provider_b',
    fineYen.id,
    fineYen.event,
    fineYen,
    /^paid_amount 499\.5 has more decimals than JPY has \(0\)$/,
  ]);
  const zeroA = providerAEvent.invoicePaid(usd.id, 0, 'USD');
  cases.push(['provider_a', zeroA.id, zeroA.type, zeroA, /^amount_paid 0\.00 USD is not an amount paid/]);
  const zeroC = providerCEvent(
    'subscription_payment_success',
    { invoice_id: usd.id },
    { total: 0, currency: 'USD', status: 'paid' },
  );
  cases.push([
    'provider_c',
    'zero-c',
    'subscription_payment_success',
    zeroC,
    /^attributes\.total 0\.00 USD is not an amount paid/,
  ]);
  for (const [provider, eventId, eventType, payload, reason] of cases) {
    const { outcome, row } = await firstAttempt(provider, eventId, eventType, payload);
    t.deepEqual(outcome, { status: 'failed' }, `${provider} ${eventId}`);
    t.is(row.attempts, 1);
    t.regex(row.failure_reason ?? '', reason);
  }
  t.deepEqual(await moneyRows(usd.id, usd.customerId), { payments: 0, credits: 0, providerCredits: 0 });
  t.deepEqual(await moneyRows(jpy.id, jpy.customerId), { payments: 0, credits: 0, providerCredits: 0 });
});

test('an exact amount still pays: provider_b "10.01" USD', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.01' });
  const event = providerBPaid(invoice.id, '10.01', 'USD');
  const { row } = await firstAttempt('provider_b', event.id, event.event, event);
  t.is(row.status, 'processed');
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
});
