import test from 'ava';
import { paymentsExport } from '../../src/console/pages/payments.tsx';
import { createRefund } from '../../src/refunds/service.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { startFakeProviderA, type FakeProviderA } from '../helpers/fake-providers.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, exportCsv, invoiceFor, pageText, parseCsv, payManually, submitForm } from './invoices-fixtures.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let kit: ConsoleKit;
let provider: FakeProviderA;
test.before(async () => {
  provider = await startFakeProviderA('sk_test');
  kit = await startConsoleKit({ PROVIDER_A_API_URL: provider.url, PROVIDER_A_SECRET_KEY: 'sk_test' });
});
test.after.always(async () => {
  await kit?.close();
  await provider?.close();
});

const db = () => kit.app.db;
const exported = async (query: Record<string, string>) =>
  parseCsv(await exportCsv(paymentsExport, kit.app.deps, query));
const refund = (paymentId: string, amount: string, reason: string | null = null, at?: Date) =>
  createRefund(db(), { paymentId, amount, reason }, SYSTEM_ACTOR, { config: kit.app.deps.config, now: at });

/** A customer with one paid-in-part invoice per payment, each payment at its time. */
async function paymentsOf(
  name: string,
  payments: { amount: string; at: Date; method?: 'manual' | 'bank_transfer'; reference?: string }[],
) {
  const c = await customer(db(), name);
  const made = [];
  for (const p of payments) {
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '100.00', at: p.at });
    made.push({
      invoice,
      payment: await payManually(db(), invoice.id, p.amount, { at: p.at, method: p.method, reference: p.reference }),
    });
  }
  return { customer: c, made };
}

test.serial('C-4: the empty list says so, at 360 px without sideways scrolling', async (t) => {
  const { page, close } = await kit.adminPage('/admin/payments', 360);
  t.is(await page.title(), 'Payments · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Payments']);
  t.deepEqual(await texts(page, '.empty'), ['No payments match.']);
  t.false(await scrollsSideways(page));
  await close();
});

test(
  'the list shows payments newest first with invoice, customer, method, reference, amount, refunded, status and ' +
    'refunds',
  async (t) => {
    const { customer: c, made } = await paymentsOf('Stark <Industries>', [
      { amount: '60.00', at: new Date('2026-02-01T09:30:00Z'), method: 'bank_transfer', reference: 'wire-42' },
    ]);
    const { invoice, payment } = made[0]!;
    await refund(payment.id, '10.00', 'goodwill', new Date('2026-02-03T10:00:00Z'));
    const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}`);
    const rows = await page.$$eval('tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent!.trim())),
    );
    t.deepEqual(rows, [
      [
        '2026-02-01 09:30 UTC',
        invoice.invoice_number,
        'Stark <Industries>',
        // Issue 34: the method and the status in words, not the API's `bank_transfer` and `partially_refunded`.
        'Bank transfer',
        'wire-42',
        '60.00 USD',
        '10.00 USD',
        'partially refunded',
        '10.00 USD · 2026-02-03 10:00 UTC · goodwill',
      ],
    ]);
    t.is(await page.$eval('tbody td:nth-child(2) a', (a) => a.getAttribute('href')), `/admin/invoices/${invoice.id}`);
    t.is(await page.$eval('tbody td:nth-child(3) a', (a) => a.getAttribute('href')), `/admin/customers/${c.id}`);
    await close();
  },
);

test('filters: status, customerId and created from/to in SQL, newest first; the export link keeps them', async (t) => {
  const { customer: c, made } = await paymentsOf('Wayne Enterprises', [
    { amount: '10.00', at: new Date('2026-03-01T00:00:00Z') },
    { amount: '20.00', at: new Date('2026-03-02T23:59:59Z') },
    { amount: '30.00', at: new Date('2026-03-03T00:00:00Z') },
  ]);
  const [, second, third] = made.map((m) => m.payment);
  await refund(second!.id, '20.00');
  await refund(third!.id, '5.00');
  const amounts = async (query: string) => {
    const { page, close } = await kit.adminPage(`/admin/payments?${query}`);
    const found = await texts(page, 'tbody tr td:nth-child(6)');
    await close();
    return found;
  };
  t.deepEqual(await amounts(`customerId=${c.id}`), ['30.00 USD', '20.00 USD', '10.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&status=succeeded`), ['10.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&status=refunded`), ['20.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&status=partially_refunded`), ['30.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&from=2026-03-02&to=2026-03-02`), ['20.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&from=2026-03-02`), ['30.00 USD', '20.00 USD']);
  t.deepEqual(await amounts(`customerId=${c.id}&to=2026-03-01`), ['10.00 USD']);

  const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}&status=refunded`);
  t.is(
    await page.$eval('.export a', (a) => a.getAttribute('href')),
    `/admin/payments/export.csv?status=refunded&customerId=${c.id}`,
  );
  await page.goto(`${kit.app.baseUrl}/admin/payments?status=paid`);
  t.regex(await pageText(page), /filter it does not understand/);
  await close();
});

test('C-4: 50 a page; the next page by cursor', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '1000.00' });
  for (let i = 0; i < 51; i += 1) await payManually(db(), invoice.id, '1.00');
  const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}`);
  t.is((await page.$$('tbody tr')).length, 50);
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  t.is((await page.$$('tbody tr')).length, 1);
  t.regex(page.url(), new RegExp(`customerId=${c.id}&startingAfter=`));
  await close();
});

test('CSV export: header, decimal amounts, UTC date-times, the formula guard, and the filters', async (t) => {
  const { customer: c, made } = await paymentsOf('-2+3 Trading', [
    { amount: '12.50', at: new Date('2026-04-01T08:00:00Z'), reference: '@ref' },
    { amount: '7.00', at: new Date('2026-04-05T08:00:00Z') },
  ]);
  await refund(made[0]!.payment.id, '2.50', null, new Date('2026-04-02T08:00:00Z'));
  const [header, ...rows] = await exported({ customerId: c.id });
  t.deepEqual(header, [
    'id',
    'invoiceId',
    'invoiceNumber',
    'customerId',
    'customerName',
    'paymentMethod',
    'providerReference',
    'currency',
    'amount',
    'refundedAmount',
    'status',
    'note',
    'receivedAt (UTC)',
    'createdAt (UTC)',
  ]);
  t.deepEqual(
    rows.map((r) => r[0]),
    [made[1]!.payment.id, made[0]!.payment.id],
  );
  t.deepEqual(rows[1], [
    made[0]!.payment.id,
    made[0]!.invoice.id,
    made[0]!.invoice.invoice_number,
    c.id,
    "'-2+3 Trading",
    'manual',
    "'@ref",
    'USD',
    '12.50',
    '2.50',
    'partially_refunded',
    '',
    '2026-04-01 08:00:00',
    '2026-04-01 08:00:00',
  ]);
  t.deepEqual(
    (await exported({ customerId: c.id, status: 'succeeded' })).slice(1).map((r) => r[0]),
    [made[1]!.payment.id],
  );
  t.deepEqual(
    (await exported({ customerId: c.id, to: '2026-04-01' })).slice(1).map((r) => r[0]),
    [made[0]!.payment.id],
  );
});

test(
  'a provider_a payment is refunded through provider_a from the invoice page; a refusal by the provider is an error ' +
    'page and records nothing',
  async (t) => {
    const c = await customer(db());
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '50.00' });
    const payment = await payManually(db(), invoice.id, '50.00', { method: 'provider_a', reference: 'pi_console_1' });
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    await submitForm(page, `/admin/payments/${payment.id}/refunds`, { amount: '12.34', reason: 'requested' });
    await submitForm(page, `/admin/payments/${payment.id}/refunds`, {});
    t.deepEqual(await texts(page, '.notice'), ['Refund of 12.34 USD recorded.']);
    t.deepEqual(
      provider.requests.filter((r) => r.form.payment_intent === 'pi_console_1').map((r) => r.form.amount),
      ['1234'],
    );
    const stored = await db()('refunds').where({ payment_id: payment.id });
    t.is(stored.length, 1);
    t.regex(stored[0].provider_refund_id, /^re_fake_/);

    provider.behave('pi_console_1', {
      status: 402,
      body: { error: { type: 'invalid_request_error', message: 'Refund declined' } },
    });
    await page.goto(`${kit.app.baseUrl}/admin/invoices/${invoice.id}`);
    await submitForm(page, `/admin/payments/${payment.id}/refunds`, { amount: '1.00', reason: 'declined test' });
    await submitForm(page, `/admin/payments/${payment.id}/refunds`, {});
    t.regex(await pageText(page), /provider_error/);
    t.is((await db()('refunds').where({ payment_id: payment.id })).length, 1);
    t.is((await db()('payments').where({ id: payment.id }).first()).refunded_amount, '12.34');
    await close();
  },
);

test('C-8: the payments list at 360 px does not scroll sideways', async (t) => {
  const { customer: c } = await paymentsOf('A customer with a long name for the narrow screen', [
    {
      amount: '10.00',
      at: new Date('2026-05-01T00:00:00Z'),
      reference: 'a-very-long-provider-reference-without-any-spaces-0123456789',
    },
  ]);
  const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}`, 360);
  t.false(await scrollsSideways(page));
  t.is((await page.$$('tbody tr')).length, 1);
  await close();
});
