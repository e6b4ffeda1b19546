/**
 * M-5 in the console: the Emails page with its filters, an email's page (text, the HTML part in a sandboxed frame
 * where a script in the email cannot run, attempts, Resend), and the customer's emails on their page.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { waitFor } from '../helpers/wait.ts';
import { makeInvoice, type Ctx } from '../payments/fixtures.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let c: Ctx;
let stopWorkers: () => Promise<void>;
test.before(async () => {
  kit = await startConsoleKit();
  stopWorkers = await registerWorkers(kit.app.boss, kit.app.deps, ['emails', 'pdf'], jobHandlers);
  const { cookie } = await loginAsAdmin(kit.app.baseUrl, kit.app.db);
  c = { baseUrl: kit.app.baseUrl, cookie, db: kit.app.db };
});
test.after.always(async () => {
  await stopWorkers?.();
  await kit?.close();
  await closeSharedBrowser();
});

/** A captured invoice.issued email of a new customer (no SMTP_URL here). */
async function capturedInvoiceEmail(name = 'Dana Buyer') {
  const customer = await insertCustomer(kit.app.db, { name });
  const invoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '99.00' });
  const rows = await waitFor(
    () => kit.app.db('emails').where({ customer_id: customer.id }),
    (r) => r[0]?.status === 'captured',
  );
  return { customer, invoice, email: rows[0]! };
}

for (const width of [1280, 360]) {
  test(`at ${width} px: the Emails page lists captured emails; filters by type and status`, async (t) => {
    const { email } = await capturedInvoiceEmail();
    const { page, close } = await kit.adminPage('/admin/emails?type=invoice.issued&status=captured', width);
    t.teardown(close);
    t.deepEqual(await texts(page, 'h1'), ['Emails']);
    t.true((await page.content()).includes(`/admin/emails/${email.id}`));
    t.true((await texts(page, '.hint')).join(' ').includes('SMTP_URL'));
    t.false(await scrollsSideways(page));
    await page.screenshot({ path: `docs/screenshots/emails-${width}.png` });
    const none = await kit.adminPage('/admin/emails?status=failed', width);
    t.teardown(none.close);
    t.false((await none.page.content()).includes(`/admin/emails/${email.id}`));
  });
}

for (const width of [1280, 360]) {
  test(`at ${width} px: an email's page shows the text, attempts and the HTML in a sandboxed frame`, async (t) => {
    const { email, invoice } = await capturedInvoiceEmail();
    const { page, close, dialogs } = await kit.adminPage(`/admin/emails/${email.id}`, width);
    t.teardown(close);
    t.deepEqual(await texts(page, 'h1'), [`Invoice ${invoice.invoiceNumber} from Your Company`]);
    t.true((await texts(page, 'pre.email-text'))[0]!.includes(invoice.hostedUrl));
    t.is(await page.$eval('iframe.email-preview', (f) => f.getAttribute('sandbox')), '');
    const frame = await (await page.$('iframe.email-preview'))!.contentFrame();
    await frame.waitForSelector('h1');
    t.is(await frame.$eval('h1', (h) => h.textContent), `Invoice ${invoice.invoiceNumber}`);
    t.deepEqual(dialogs, []);
    t.false(await scrollsSideways(page));
    await page.screenshot({ path: `docs/screenshots/email-${width}.png`, fullPage: true });
  });
}

test('a script in an email cannot run: not in the frame, not in the console', async (t) => {
  const customer = await insertCustomer(kit.app.db);
  const [row] = await kit.app
    .db('emails')
    .insert({
      type: 'portal.code',
      customer_id: customer.id,
      occasion: randomUUID(),
      status: 'captured',
      message_id: randomUUID(),
      subject: 'Hostile <b>subject</b>',
      text_body: '<script>alert(1)</script>',
      html:
        '<h1>Hi</h1><script>alert("frame")</script><img src=x onerror="alert(1)">' +
        '<script>parent.document.title="owned"</script>',
    })
    .returning('id');
  const { page, close, dialogs } = await kit.adminPage(`/admin/emails/${row.id}`);
  t.teardown(close);
  const frame = await (await page.$('iframe.email-preview'))!.contentFrame();
  await frame.waitForSelector('h1');
  t.deepEqual(dialogs, []);
  t.notRegex(await page.title(), /owned/);
  t.deepEqual(await texts(page, 'h1'), ['Hostile <b>subject</b>']);
  // The preview answers with its own sandbox CSP, and only to an admin.
  const preview = await fetch(`${kit.app.baseUrl}/admin/emails/${row.id}/html`, { headers: { cookie: c.cookie } });
  t.regex(preview.headers.get('content-security-policy')!, /^sandbox;/);
  t.is((await fetch(`${kit.app.baseUrl}/admin/emails/${row.id}/html`)).status, 401);
});

test('Resend from the email page: a new email, the same content, and the confirmation', async (t) => {
  const { email } = await capturedInvoiceEmail();
  const { page, close } = await kit.adminPage(`/admin/emails/${email.id}`);
  t.teardown(close);
  await Promise.all([page.waitForNavigation(), page.click(`form[action="/admin/emails/${email.id}/resend"] button`)]);
  t.regex(page.url(), /\/admin\/emails\/[0-9a-f-]{36}$/);
  t.false(page.url().endsWith(email.id));
  t.true((await page.content()).includes('Email queued again as a new email.'));
  const copies = await kit.app.db('emails').where({ resent_from: email.id });
  t.is(copies.length, 1);
  t.is(copies[0].subject, email.subject);
});

test("the customer's page lists their emails and links to the Emails page filtered to them", async (t) => {
  const { customer, email } = await capturedInvoiceEmail('Emailed Customer');
  const { page, close } = await kit.adminPage(`/admin/customers/${customer.id}`);
  t.teardown(close);
  const section = await page.$eval('#emails', (s) => s.innerHTML);
  t.true(section.includes(`/admin/emails/${email.id}`));
  t.true(section.includes(`/admin/emails?customerId=${customer.id}`));
});
