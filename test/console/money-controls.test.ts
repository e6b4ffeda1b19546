/**
 * Issue 34, the finance team's first morning: money that moved without a trace, each test written as the
 * walk-through found it, in Chromium (C-12 to C-14).
 */
import test from 'ava';
import { auditEntriesOf } from '../../src/audit/service.ts';
import { listPayments } from '../../src/payments/service.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';
import { customer, fieldValue, invoiceFor, pageText, payManually, submitForm } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const paymentsOf = async (invoiceId: string) => (await listPayments(db(), { limit: 100 }, { invoiceId })).rows;
const amountsShown = async (page: import('puppeteer').Page) =>
  page.$$eval('dl.amounts dt', (dts) =>
    Object.fromEntries(dts.map((dt) => [dt.textContent!.trim(), dt.nextElementSibling!.textContent!.trim()])),
  );

test('C-12: marking an invoice paid asks first, then records a manual payment of the amount due', async (t) => {
  const c = await customer(db(), 'Chloé Martin');
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '99.00' });
  const url = `/admin/invoices/${invoice.id}`;
  const { page, close } = await kit.adminPage(url);
  await submitForm(page, `${url}/status`, { status: 'paid', note: 'Cheque 004512' });
  // The walk-through: "read paid with amount paid 0.00 and amount due 0.00; no payment, no reason, no confirmation".
  t.regex(await pageText(page), /Please confirm\. Marking .* paid records a manual payment of 99\.00 USD/);
  t.deepEqual(await paymentsOf(invoice.id), [], 'nothing is recorded before the confirmation');
  t.is(await fieldValue(page, `${url}/status`, 'note'), 'Cheque 004512');
  await submitForm(page, `${url}/status`, {});
  t.regex(await pageText(page), /is now paid\./);
  const [payment, ...others] = await paymentsOf(invoice.id);
  t.is(others.length, 0);
  t.like(payment, {
    amount: '99.00',
    payment_method: 'manual',
    provider_reference: `marked_paid:${invoice.invoice_number}`,
    note: 'Cheque 004512',
  });
  const amounts = await amountsShown(page);
  t.is(amounts['Amount paid'], '99.00 USD');
  t.is(amounts['Amount due'], '0.00 USD');
  t.regex(await page.$eval('.status', (e) => e.textContent!), /paid/);
  const [audit] = await auditEntriesOf(db(), 'invoice', invoice.id);
  t.is(audit!.action, 'invoice.mark_paid');
  t.is((audit!.after as Record<string, unknown>).note, 'Cheque 004512');
  await close();
});

test('C-12: the API marks paid the same way; writing off is void', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '40.00' });
  await payManually(db(), invoice.id, '15.00');
  const { cookie } = await loginAsAdmin(kit.app.baseUrl, db());
  const put = (id: string, body: unknown) =>
    request(kit.app.baseUrl, `/api/billing/invoices/${id}`, { method: 'PUT', body, cookie });
  const bad = await put(invoice.id, { status: 'paid', note: '' });
  t.is(bad.status, 400);
  t.is(bad.body.error.details[0].path, 'note');
  const paid = await put(invoice.id, { status: 'paid', note: 'Paid in cash at the counter' });
  t.is(paid.status, 200);
  t.like(paid.body, { status: 'paid', amountPaid: '40.00', amountDue: '0.00' });
  const payments = await paymentsOf(invoice.id);
  t.deepEqual(
    payments.map((p) => [p.amount, p.payment_method, p.note]),
    [
      ['15.00', 'manual', null],
      ['25.00', 'manual', 'Paid in cash at the counter'],
    ],
  );
  const other = await invoiceFor(db(), c.id, { unitPrice: '10.00' });
  const voided = await put(other.id, { status: 'void' });
  t.is(voided.status, 200);
  t.deepEqual(await paymentsOf(other.id), []);
});

test('C-13: back button and resubmit of a payment without a reference asks before recording it again', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '10.00' });
  const url = `/admin/invoices/${invoice.id}`;
  const { page, close } = await kit.adminPage(url);
  const pay = { amount: '4.00', paymentMethod: 'manual', providerReference: '' };
  await submitForm(page, `${url}/payments`, pay);
  t.regex(await pageText(page), /Payment of 4\.00 USD recorded/);
  await page.goBack();
  await submitForm(page, `${url}/payments`, pay);
  // The walk-through: "recorded a second identical payment (4.00 twice) when it had no reference".
  t.regex(
    await pageText(page),
    /Please confirm\. A payment of 4\.00 USD \(Manual, received \d{4}-\d\d-\d\d\) was recorded/,
  );
  t.deepEqual(
    (await paymentsOf(invoice.id)).map((p) => p.amount),
    ['4.00'],
  );
  // Asked and confirmed, a second one is recorded: two payments of the same amount can be real.
  await submitForm(page, `${url}/payments`, {});
  t.deepEqual(
    (await paymentsOf(invoice.id)).map((p) => p.amount),
    ['4.00', '4.00'],
  );
  await close();
});

test('C-13: the same form posted twice (a double click) records one payment, answering the first result', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '10.00' });
  const url = `/admin/invoices/${invoice.id}`;
  const { page, close } = await kit.adminPage(url);
  const answers = await page.evaluate(async (action) => {
    const form = Array.from(document.querySelectorAll('form')).find((f) => f.getAttribute('action') === action)!;
    (form.elements.namedItem('amount') as HTMLInputElement).value = '3.00';
    (form.elements.namedItem('providerReference') as HTMLInputElement).value = 'BT-77';
    const body = new URLSearchParams(new FormData(form) as unknown as Record<string, string>).toString();
    return Promise.all(
      [1, 2].map(() =>
        fetch(action, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          redirect: 'manual',
        }).then((r) => r.type),
      ),
    );
  }, `${url}/payments`);
  t.deepEqual(answers, ['opaqueredirect', 'opaqueredirect'], 'both answer the redirect of the first');
  t.deepEqual(
    (await paymentsOf(invoice.id)).map((p) => [p.amount, p.provider_reference]),
    [['3.00', 'BT-77']],
  );
  await page.reload();
  t.deepEqual(await paymentsOf(invoice.id).then((rows) => rows.length), 1);
  await close();
});

test('C-13: a payment takes the date it was received; the future and before issuing are refused', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '50.00', at: new Date('2026-11-02T10:00:00Z') });
  const url = `/admin/invoices/${invoice.id}`;
  const { page, close } = await kit.adminPage(url);
  await submitForm(page, `${url}/payments`, { amount: '20.00', receivedAt: '2099-01-01' });
  t.regex(await pageText(page), /Received at: must not be in the future/);
  t.is(await fieldValue(page, `${url}/payments`, 'amount'), '20.00', 'what was typed is kept');
  await submitForm(page, `${url}/payments`, { amount: '20.00', receivedAt: '2026-11-01' });
  t.regex(await pageText(page), /must not be before the day the invoice was issued, 2026-11-02/);
  await submitForm(page, `${url}/payments`, { amount: '20.00', receivedAt: '2026-11-20' });
  t.regex(await pageText(page), /Payment of 20\.00 USD recorded/);
  const [payment] = await paymentsOf(invoice.id);
  t.is(payment!.received_at.toISOString(), '2026-11-20T00:00:00.000Z');
  t.regex(await page.$eval('#payments-table tbody tr td, .wide table tbody tr td', (td) => td.textContent!), /./);
  t.true((await pageText(page)).includes('2026-11-20 00:00 UTC'));
  await close();
});

test('C-14: store credit is offered in the customer currencies only; another currency is refused', async (t) => {
  const c = await customer(db(), 'Société Générale de Test');
  await invoiceFor(db(), c.id, { unitPrice: '10.00', currency: 'EUR' });
  const url = `/admin/customers/${c.id}`;
  const { page, close } = await kit.adminPage(url);
  const options = await page.$$eval(`form[action="${url}/credits"] select[name=currency] option`, (os) =>
    os.map((o) => (o as HTMLOptionElement).value),
  );
  // The walk-through: "A EUR customer was given 20.00 USD store credit" from a free-text field defaulting to USD.
  t.deepEqual(options, ['EUR']);
  await submitForm(page, `${url}/credits`, { amount: '20.00', description: 'Goodwill' });
  t.regex(await pageText(page), /Granted 20\.00 EUR of store credit/);
  const { cookie } = await loginAsAdmin(kit.app.baseUrl, db());
  const before = await db()('credit_ledger').where({ customer_id: c.id }).count<{ count: string }[]>('* as count');
  const usd = await request(kit.app.baseUrl, '/api/billing/credits', {
    cookie,
    body: { customerId: c.id, amount: '20.00', currency: 'USD' },
  });
  t.is(usd.status, 400);
  t.is(usd.body.error.code, 'currency_mismatch');
  t.deepEqual(
    usd.body.error.details.map((d: { path: string }) => d.path),
    ['currency'],
  );
  const after = await db()('credit_ledger').where({ customer_id: c.id }).count<{ count: string }[]>('* as count');
  t.deepEqual(after, before, 'nothing written');
  await close();
});

test('the invoice page reads the credit notes amount under "Credited (credit notes)"', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '20.00' });
  await payManually(db(), invoice.id, '20.00');
  const url = `/admin/invoices/${invoice.id}`;
  const { page, close } = await kit.adminPage(url);
  await submitForm(page, `${url}/credit-notes`, {
    amount: '5.00',
    reason: 'Two days of degraded service',
    reasonCode: 'service_issue',
  });
  // The walk-through: "Credited (credit notes) 0.00" directly above a 5.00 credit note.
  const amounts = await amountsShown(page);
  t.is(amounts['Credited (credit notes)'], '5.00 USD of which 5.00 USD to store credit');
  t.regex(await pageText(page), /Service issue: Two days of degraded service/);
  await close();
});

test('C-14: a refund needs a reason, takes a reason code and asks first', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '30.00' });
  await payManually(db(), invoice.id, '30.00', { method: 'bank_transfer', reference: 'BT-REFUND-1' });
  const [payment] = await paymentsOf(invoice.id);
  const url = `/admin/invoices/${invoice.id}`;
  const action = `/admin/payments/${payment!.id}/refunds`;
  const { page, close } = await kit.adminPage(url);
  t.true(await page.$eval(`form[action="${action}"] [name=reason]`, (el) => (el as HTMLInputElement).required));
  // Past the browser's own check, the service names the field.
  await page.$eval(`form[action="${action}"] [name=reason]`, (el) => el.removeAttribute('required'));
  await submitForm(page, action, { amount: '10.00', reason: '  ' });
  t.regex(await pageText(page), /reason: is required/);
  await submitForm(page, action, { amount: '10.00', reason: 'Charged twice', reasonCode: 'duplicate' });
  t.regex(await pageText(page), /Please confirm\. Refunding 10\.00 USD sends the money back/);
  t.is((await db()('refunds').where({ payment_id: payment!.id })).length, 0, 'nothing before the confirmation');
  await submitForm(page, action, {});
  t.regex(await pageText(page), /Refund of 10\.00 USD recorded/);
  const [refund] = await db()('refunds').where({ payment_id: payment!.id });
  t.like(refund, { amount: '10.00', reason: 'Charged twice', reason_code: 'duplicate' });
  t.regex(await pageText(page), /Duplicate: Charged twice/);
  const { cookie } = await loginAsAdmin(kit.app.baseUrl, db());
  const noReason = await request(kit.app.baseUrl, '/api/billing/refunds', {
    cookie,
    body: { paymentId: payment!.id, amount: '1.00' },
  });
  t.is(noReason.status, 400);
  t.is(noReason.body.error.details[0].path, 'reason');
  const badCode = await request(kit.app.baseUrl, '/api/billing/refunds', {
    cookie,
    body: { paymentId: payment!.id, amount: '1.00', reason: 'Charged twice', reasonCode: 'bogus' },
  });
  t.is(badCode.status, 400);
  t.is(badCode.body.error.details[0].path, 'reasonCode');
  t.regex(badCode.body.error.details[0].message, /must be one of duplicate, fraudulent/);
  await close();
});
