/**
 * A payment event counts as money received only when its own status says paid. provider_a completes a
 * checkout session also when a delayed method (a bank debit) has only been started (`payment_status:
 * "unpaid"`): that completion is processed and pays nothing; `checkout.session.async_payment_succeeded` is the
 * payment (once per payment intent) and `async_payment_failed` is a failed payment. provider_b and provider_c
 * statuses saying not paid are read the same way.
 */
import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  postProviderA,
  postProviderB,
  postProviderC,
  PROVIDER_SECRETS,
  providerAEvent,
  providerBPaid,
  providerCEvent,
} from '../helpers/provider-events.ts';
import { adminCtx, makeInvoice, readInvoice, type Ctx } from '../payments/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { createHash } from 'node:crypto';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp({ ...PROVIDER_SECRETS });
  c = await adminCtx(app);
  await registerWorkers(app.boss, app.deps, ['provider_events'], jobHandlers);
});
test.after.always(async () => app?.close());

type StoredRow = { id: string; status: string; failure_reason: string | null };
const stored = (provider: string, eventId: string) => (): Promise<StoredRow | undefined> =>
  app.db('provider_events').where({ provider, event_id: eventId }).first();
const settled = (provider: string, eventId: string) =>
  waitFor(stored(provider, eventId), (r) => r !== undefined && r.status !== 'received');
const paymentsOf = (invoiceId: string) => app.db('payments').where({ invoice_id: invoiceId });
const eventTypesOf = async (invoiceId: string) =>
  (await app.db('events').whereRaw("data->>'invoiceId' = ?", [invoiceId]).orderBy('created_at')).map(
    (e) => e.type as string,
  );
const digest = (body: string) => createHash('sha256').update(body).digest('hex');

test(
  'provider_a: a checkout completed "unpaid" is processed and pays nothing; ' + 'its async success is the one payment',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '49.99' });
    const completed = providerAEvent.checkoutCompleted(invoice.id, 4999, 'USD', 'pi_delayed_1', 'unpaid');
    const res = await postProviderA(app.baseUrl, completed);
    t.is(res.status, 200);
    t.deepEqual(res.body, { received: true });
    const row = await settled('provider_a', completed.id);
    t.is(row!.status, 'processed');
    t.is(row!.failure_reason, null);
    t.is((await paymentsOf(invoice.id)).length, 0);
    t.like(await readInvoice(c, invoice.id), { status: 'issued', amountPaid: '0.00', amountDue: '49.99' });
    t.false((await eventTypesOf(invoice.id)).includes('payment.succeeded'));

    // The bank debit settles: one payment, by the same payment intent, and the invoice is paid.
    const succeeded = providerAEvent.asyncPaymentSucceeded(invoice.id, 4999, 'USD', 'pi_delayed_1');
    t.is((await postProviderA(app.baseUrl, succeeded)).status, 200);
    t.is((await settled('provider_a', succeeded.id))!.status, 'processed');
    const payments = await paymentsOf(invoice.id);
    t.is(payments.length, 1);
    t.like(payments[0], { payment_method: 'provider_a', provider_reference: 'pi_delayed_1', amount: '49.99' });
    t.like(await readInvoice(c, invoice.id), { status: 'paid', amountDue: '0.00' });

    // The same success carried by another event (a resend under a new id) records nothing more, not even credit.
    const again = providerAEvent.asyncPaymentSucceeded(invoice.id, 4999, 'USD', 'pi_delayed_1');
    await postProviderA(app.baseUrl, again);
    t.is((await settled('provider_a', again.id))!.status, 'processed');
    t.is((await paymentsOf(invoice.id)).length, 1);
    t.is((await app.db('credit_ledger').where({ customer_id: invoice.customerId })).length, 0);
    t.deepEqual(
      (await eventTypesOf(invoice.id)).filter((type) => type === 'payment.succeeded' || type === 'invoice.paid'),
      ['payment.succeeded', 'invoice.paid'],
    );
  },
);

test(
  'provider_a: a completed session that is paid still pays at once, ' + 'and its async success adds nothing',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '12.00' });
    const completed = providerAEvent.checkoutCompleted(invoice.id, 1200, 'USD', 'pi_card_1', 'paid');
    await postProviderA(app.baseUrl, completed);
    t.is((await settled('provider_a', completed.id))!.status, 'processed');
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
    const late = providerAEvent.asyncPaymentSucceeded(invoice.id, 1200, 'USD', 'pi_card_1');
    await postProviderA(app.baseUrl, late);
    await settled('provider_a', late.id);
    t.is((await paymentsOf(invoice.id)).length, 1);
  },
);

test(
  'provider_a: the async payment failing pays nothing and ' + 'takes the failed-payment path (payment.failed, dunning)',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '30.00' });
    const completed = providerAEvent.checkoutCompleted(invoice.id, 3000, 'USD', 'pi_delayed_2', 'unpaid');
    await postProviderA(app.baseUrl, completed);
    await settled('provider_a', completed.id);
    const failed = providerAEvent.asyncPaymentFailed(invoice.id, 3000, 'USD', 'pi_delayed_2');
    await postProviderA(app.baseUrl, failed);
    t.is((await settled('provider_a', failed.id))!.status, 'processed');
    t.is((await paymentsOf(invoice.id)).length, 0);
    t.like(await readInvoice(c, invoice.id), { status: 'issued', amountDue: '30.00' });
    const types = await eventTypesOf(invoice.id);
    t.true(types.includes('payment.failed'), types.join());
    t.true(types.includes('dunning.started'), types.join());
    t.false(types.includes('payment.succeeded'));
    const failure = await app
      .db('events')
      .where({ type: 'payment.failed' })
      .whereRaw("data->>'invoiceId' = ?", [invoice.id])
      .first();
    t.like(failure.data, {
      invoiceId: invoice.id,
      paymentMethod: 'provider_a',
      failureReason: 'the delayed payment of a provider_a checkout failed',
    });
  },
);

test(
  'provider_a: a completion without payment_status cannot be judged: ' + 'failed with the reason, nothing paid',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '8.00' });
    const completed = providerAEvent.checkoutCompleted(invoice.id, 800, 'USD');
    delete (completed.data.object as { payment_status?: string }).payment_status;
    await postProviderA(app.baseUrl, completed);
    const row = await settled('provider_a', completed.id);
    t.is(row!.status, 'failed');
    t.is(row!.failure_reason, 'the event has no payment_status');
    t.is((await paymentsOf(invoice.id)).length, 0);
  },
);

test('provider_a invoice.paid whose invoice status is not paid pays nothing', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '9.00' });
  const event = providerAEvent.invoicePaid(invoice.id, 900, 'USD');
  (event.data.object as Record<string, unknown>).status = 'open';
  await postProviderA(app.baseUrl, event);
  t.is((await settled('provider_a', event.id))!.status, 'processed');
  t.is((await paymentsOf(invoice.id)).length, 0);
  t.is((await readInvoice(c, invoice.id)).status, 'issued');
});

test(
  'provider_b invoices.paid pays when its status is PAID or SETTLED, ' + 'and nothing when it says PENDING or EXPIRED',
  async (t) => {
    for (const [status, pays] of [
      ['PENDING', false],
      ['EXPIRED', false],
      ['SETTLED', true],
      ['PAID', true],
    ] as const) {
      const invoice = await makeInvoice(c, { unitPrice: '15.00' });
      const event = providerBPaid(invoice.id, '15.00', 'USD');
      event.data.status = status;
      t.is((await postProviderB(app.baseUrl, event)).status, 200);
      t.is((await settled('provider_b', event.id))!.status, 'processed', status);
      t.is((await paymentsOf(invoice.id)).length, pays ? 1 : 0, status);
      t.is((await readInvoice(c, invoice.id)).status, pays ? 'paid' : 'issued', status);
    }
  },
);

test('provider_c order_created pays only a paid order; a pending, failed or unstated one pays nothing', async (t) => {
  const cases: [Record<string, unknown>, string, number][] = [
    [{ status: 'pending' }, 'processed', 0],
    [{ status: 'failed' }, 'processed', 0],
    [{ status: undefined }, 'failed', 0],
    [{ status: 'paid' }, 'processed', 1],
  ];
  for (const [extra, outcome, payments] of cases) {
    const invoice = await makeInvoice(c, { unitPrice: '9.00' });
    const body = JSON.stringify(
      providerCEvent('order_created', { invoice_id: invoice.id }, { total: 900, currency: 'USD', ...extra }),
    );
    t.is((await postProviderC(app.baseUrl, body)).status, 200);
    const row = await settled('provider_c', digest(body));
    t.is(row!.status, outcome, JSON.stringify(extra));
    if (outcome === 'failed') t.is(row!.failure_reason, 'the event has no attributes.status');
    t.is((await paymentsOf(invoice.id)).length, payments, JSON.stringify(extra));
  }
  // A subscription payment's success says paid by itself, unless its status says otherwise.
  const pending = await makeInvoice(c, { unitPrice: '9.00' });
  const body = JSON.stringify(
    providerCEvent(
      'subscription_payment_success',
      { invoice_id: pending.id },
      { total: 900, currency: 'USD', status: 'pending' },
    ),
  );
  await postProviderC(app.baseUrl, body);
  t.is((await settled('provider_c', digest(body)))!.status, 'processed');
  t.is((await paymentsOf(pending.id)).length, 0);
});
