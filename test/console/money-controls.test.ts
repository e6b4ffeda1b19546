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
  t.regex(await pageText(page), /is now paid\. A manual payment of the amount due was recorded\./);
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

test('C-13: the same form posted twice (a double click) records one payment and answers the first result', async (t) => {
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
