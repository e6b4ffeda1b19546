import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { recordPaymentFailure, recordRetryFailure } from '../../src/dunning/service.ts';
import { queueEmails } from '../../src/emails/outbox.ts';
import { portalCodeEmail } from '../../src/emails/portal-code.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import type { ReceivedMail } from '../helpers/smtp.ts';
import { makeInvoice, pay, readInvoice } from '../payments/fixtures.ts';
import { emailRows, mailsMatching, startEmailsWorld, type EmailsWorld } from './fixtures.ts';

let w: EmailsWorld;
test.before(async () => {
  w = await startEmailsWorld();
  const res = await request(w.app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: w.c.cookie,
    body: {
      'company.name': 'Acme Ltd',
      'company.email': 'support@acme.test',
      'company.address': '1 Main St, Springfield',
      'billing.dunning_schedule_days': [1],
    },
  });
  if (res.status !== 200) throw new Error(res.text);
});
test.after.always(async () => {
  await w?.close();
});

const HOSTED = /https:\/\/billing\.acme\.test\/i\/[A-Za-z0-9_-]{43}/;

/** What every email carries (M-3): one recipient, both parts, the company's name and support address. */
function assertWhole(t: import('ava').ExecutionContext, mail: ReceivedMail, to: string) {
  t.deepEqual(mail.to, [to]);
  t.is(mail.parsed.from?.value[0]?.address, 'billing@acme.test');
  t.truthy(mail.parsed.text, 'a text part');
  t.truthy(mail.parsed.html, 'an HTML part');
  for (const part of [mail.parsed.text as string, mail.parsed.html as string]) {
    t.true(part.includes('Acme Ltd'));
    t.true(part.includes('support@acme.test'));
  }
  t.regex(mail.messageId, /^<[0-9a-f-]{36}@acme\.test>$/);
  // The stylesheet is inlined (juice): mail clients drop <style>.
  t.regex(mail.parsed.html as string, /<h1 style="/);
}

test('invoice.issued: number, total, due date, the hosted link in both parts and the PDF attached', async (t) => {
  const customer = await insertCustomer(w.app.db, { name: 'Dana Buyer' });
  const invoice = await makeInvoice(w.c, { customerId: customer.id, unitPrice: '1234.50' });
  const [mail] = await mailsMatching(w.smtp, `Invoice ${invoice.invoiceNumber} from Acme Ltd`);
  assertWhole(t, mail!, customer.email);
  const text = mail!.parsed.text!;
  t.true(text.includes('1,234.50 USD'), text);
  t.true(text.includes(invoice.dueDate.slice(0, 10)));
  const link = HOSTED.exec(text)?.[0];
  t.truthy(link);
  t.true((mail!.parsed.html as string).includes(`href="${link}"`));
  // The link is the invoice's hostedUrl, the same in the API's answer.
  t.is((await readInvoice(w.c, invoice.id)).hostedUrl, link);
  t.is(mail!.parsed.attachments.length, 1);
  const pdf = mail!.parsed.attachments[0]!;
  t.is(pdf.contentType, 'application/pdf');
  t.is(pdf.filename, `${invoice.invoiceNumber}.pdf`);
  t.is(pdf.content.subarray(0, 5).toString(), '%PDF-');
  const [row] = await emailRows(
    w.app,
    { type: 'invoice.issued', customer_id: customer.id },
    (r) => r[0]?.status === 'sent',
  );
  t.is(`<${row!.message_id}@acme.test>`, mail!.messageId);
});

test('a draft sends nothing; issuing it sends invoice.issued once', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const draft = await makeInvoice(w.c, { customerId: customer.id, status: 'draft' });
  t.is(draft.hostedUrl, null);
  t.is((await w.app.db('emails').where({ customer_id: customer.id })).length, 0);
  const res = await request(w.app.baseUrl, `/api/billing/invoices/${draft.id}`, {
    method: 'PUT',
    cookie: w.c.cookie,
    body: { status: 'issued' },
  });
  t.is(res.status, 200, res.text);
  const mails = await mailsMatching(w.smtp, `Invoice ${draft.invoiceNumber} from`);
  t.is(mails.length, 1);
  t.deepEqual(mails[0]!.to, [customer.email]);
});

test('payment.receipt, credit_note.issued and refund.issued name the amounts and the invoice', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const invoice = await makeInvoice(w.c, { customerId: customer.id, unitPrice: '100.00' });
  const paid = await pay(w.c, { invoiceId: invoice.id, amount: '40.00' });
  t.is(paid.status, 201, paid.text);
  const [receipt] = await mailsMatching(w.smtp, `Receipt for invoice ${invoice.invoiceNumber}`);
  assertWhole(t, receipt!, customer.email);
  t.regex(receipt!.parsed.text!, /Amount paid: +40\.00 USD/);
  t.regex(receipt!.parsed.text!, /Amount still due: +60\.00 USD/);
  t.regex(receipt!.parsed.text!, HOSTED);

  const note = await request(w.app.baseUrl, '/api/billing/credit-notes', {
    cookie: w.c.cookie,
    body: { invoiceId: invoice.id, amount: '10.00', reason: 'Late delivery' },
  });
  t.is(note.status, 201, note.text);
  const [noteMail] = await mailsMatching(w.smtp, `Credit note for invoice ${invoice.invoiceNumber}`);
  assertWhole(t, noteMail!, customer.email);
  t.regex(noteMail!.parsed.text!, /Amount: +10\.00 USD/);
  t.regex(noteMail!.parsed.text!, /Reason: +Late delivery/);

  const refund = await request(w.app.baseUrl, '/api/billing/refunds', {
    cookie: w.c.cookie,
    body: { paymentId: paid.body.id, amount: '15.00', reason: 'Seats not used' },
  });
  t.is(refund.status, 201, refund.text);
  const [refundMail] = await mailsMatching(w.smtp, `Refund for invoice ${invoice.invoiceNumber}`);
  assertWhole(t, refundMail!, customer.email);
  t.regex(refundMail!.parsed.text!, /Amount refunded: +15\.00 USD/);
});

test('payment.failed names the next attempt; dunning.final what happens next; each with the link to pay', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const invoice = await makeInvoice(w.c, { customerId: customer.id, unitPrice: '80.00' });
  const now = new Date();
  await w.app.db.transaction((trx) =>
    recordPaymentFailure(trx, {
      invoiceId: invoice.id,
      paymentMethod: 'provider_a',
      failureReason: 'card_declined',
      now,
      actor: SYSTEM_ACTOR,
    }),
  );
  const [failed] = await mailsMatching(w.smtp, `Payment failed for invoice ${invoice.invoiceNumber}`);
  assertWhole(t, failed!, customer.email);
  t.regex(failed!.parsed.text!, /Amount due: +80\.00 USD/);
  const nextDay = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);
  t.true(failed!.parsed.text!.includes(`We will try again on ${nextDay}`), failed!.parsed.text!);
  t.regex(failed!.parsed.text!, HOSTED);

  await w.app.db.transaction(async (trx) => {
    const c = await trx('dunning_cases').where({ invoice_id: invoice.id }).first();
    const row = await trx('invoices').where({ id: invoice.id }).first();
    await recordRetryFailure(trx, c, row, 'card_declined', new Date());
  });
  const [final] = await mailsMatching(w.smtp, `Final notice: invoice ${invoice.invoiceNumber} is unpaid`);
  assertWhole(t, final!, customer.email);
  t.true(final!.parsed.text!.includes('subscription has been canceled'));
  t.regex(final!.parsed.text!, HOSTED);
});

test('license.issued carries the key, product, expiry and device limit', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const product = await request(w.app.baseUrl, '/api/products', {
    cookie: w.c.cookie,
    body: { name: 'Acme Desktop', productType: 'licensed', price: '99.00' },
  });
  t.is(product.status, 201, product.text);
  const license = await request(w.app.baseUrl, '/api/licenses', {
    cookie: w.c.cookie,
    body: { customerId: customer.id, productId: product.body.id, maxActivations: 3, expiresAt: '2027-06-30T00:00:00Z' },
  });
  t.is(license.status, 201, license.text);
  const [mail] = await mailsMatching(w.smtp, 'Your license key for Acme Desktop');
  assertWhole(t, mail!, customer.email);
  const text = mail!.parsed.text!;
  t.true(text.includes(license.body.key ?? license.body.licenseKey), text);
  t.regex(text, /Expires: +2027-06-30/);
  t.regex(text, /Device limit: +3/);
});

test.serial(
  'portal.code carries the code and its lifetime, and is sent even when switched off in the settings',
  async (t) => {
    const customer = await insertCustomer(w.app.db);
    const off = await request(w.app.baseUrl, '/api/settings', {
      method: 'PUT',
      cookie: w.c.cookie,
      body: { 'emails.enabled_types': ['invoice.issued'] },
    });
    t.is(off.status, 200, off.text);
    t.teardown(() =>
      w.app
        .db('settings')
        .where({ key: 'emails.enabled_types' })
        .del()
        .then(() => undefined),
    );
    await w.app.db.transaction((trx) =>
      queueEmails(trx, [
        portalCodeEmail(customer.id, 'code-1', '482913', 15),
        { type: 'license.issued', customerId: customer.id, occasion: 'x', data: {} },
      ]),
    );
    const [mail] = await mailsMatching(w.smtp, 'Your sign-in code for Acme Ltd');
    assertWhole(t, mail!, customer.email);
    t.regex(mail!.parsed.text!, /Code: +482913/);
    t.true(mail!.parsed.text!.includes('valid for 15 minutes'));
    const skipped = await w.app.db('emails').where({ customer_id: customer.id, type: 'license.issued' }).first();
    t.is(skipped.status, 'skipped');
  },
);

test('emails.enabled_types refuses an unknown type and changes nothing', async (t) => {
  const res = await request(w.app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: w.c.cookie,
    body: { 'emails.enabled_types': ['invoice.issued', 'invoice.sent'] },
  });
  t.is(res.status, 400, res.text);
  t.regex(res.text, /must be one of/);
  t.is((await w.app.db('settings').where({ key: 'emails.enabled_types' })).length, 0);
});
