/**
 * M-2 against a real SMTP server on loopback: a server that refuses (451) the first attempts gets the email once,
 * with the same Message-ID on every attempt; a server that is down longer than the schedule leaves the email
 * `failed` with its last error, which the API and the console show; without SMTP_URL every email is `captured`.
 */
import test from 'ava';
import { freePort } from '../helpers/net.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { makeInvoice } from '../payments/fixtures.ts';
import { emailRows, mailsMatching, startEmailsWorld } from './fixtures.ts';

test('SMTP 451 for the first two attempts: delivered once on the third, one Message-ID throughout', async (t) => {
  const w = await startEmailsWorld();
  t.teardown(() => w.close());
  w.smtp.refuse(2);
  const customer = await insertCustomer(w.app.db);
  const invoice = await makeInvoice(w.c, { customerId: customer.id });
  const [row] = await emailRows(w.app, { customer_id: customer.id }, (r) => r[0]?.status === 'sent');
  t.is(row!.status, 'sent');
  t.deepEqual(
    row!.attempt_log.map((a) => a.outcome),
    ['error', 'error', 'sent'],
    JSON.stringify(row!.attempt_log),
  );
  t.is(row!.attempts, 3);
  t.regex(row!.attempt_log[0]!.error!, /451/);
  t.is(w.smtp.refused(), 2);
  const mails = await mailsMatching(w.smtp, `Invoice ${invoice.invoiceNumber}`);
  t.is(mails.length, 1);
  t.is(mails[0]!.messageId, `<${row!.message_id}@acme.test>`);
});

test('SMTP down longer than the attempts: failed after six, the last error kept and shown', async (t) => {
  const closedPort = await freePort();
  const w = await startEmailsWorld({ SMTP_URL: `smtp://127.0.0.1:${closedPort}` });
  t.teardown(() => w.close());
  const customer = await insertCustomer(w.app.db);
  await makeInvoice(w.c, { customerId: customer.id });
  const [row] = await emailRows(w.app, { customer_id: customer.id }, (r) => r[0]?.status === 'failed');
  t.is(row!.status, 'failed');
  t.is(row!.attempts, 6);
  t.regex(row!.last_error!, /ECONNREFUSED/);
  const api = await request(w.app.baseUrl, `/api/emails/${row!.id}`, { cookie: w.c.cookie });
  t.is(api.status, 200, api.text);
  t.is(api.body.status, 'failed');
  t.regex(api.body.lastError, /ECONNREFUSED/);
  t.is(api.body.attemptLog.length, 6);
  const page = await request(w.app.baseUrl, `/admin/emails/${row!.id}`, { cookie: w.c.cookie });
  t.is(page.status, 200);
  t.true(page.text.includes('ECONNREFUSED'));
  t.is(w.smtp.received.length, 0);
});

test('without SMTP_URL every email is composed and kept as captured, nothing sent', async (t) => {
  const w = await startEmailsWorld({ SMTP_URL: '' });
  t.teardown(() => w.close());
  const customer = await insertCustomer(w.app.db);
  const invoice = await makeInvoice(w.c, { customerId: customer.id });
  const [row] = await emailRows(w.app, { customer_id: customer.id }, (r) => r[0]?.status === 'captured');
  t.is(row!.status, 'captured');
  const api = await request(w.app.baseUrl, `/api/emails/${row!.id}`, { cookie: w.c.cookie });
  t.is(api.body.to, customer.email);
  t.is(api.body.subject, `Invoice ${invoice.invoiceNumber} from Your Company`);
  t.true(api.body.text.includes(invoice.hostedUrl));
  t.is(w.smtp.received.length, 0);
});

test('Resend: a new email with the same content and its own Message-ID, audited; an unknown id is 404', async (t) => {
  const w = await startEmailsWorld();
  t.teardown(() => w.close());
  const customer = await insertCustomer(w.app.db);
  const invoice = await makeInvoice(w.c, { customerId: customer.id });
  const [row] = await emailRows(w.app, { customer_id: customer.id }, (r) => r[0]?.status === 'sent');
  const res = await request(w.app.baseUrl, `/api/emails/${row!.id}/resend`, { method: 'POST', cookie: w.c.cookie });
  t.is(res.status, 201, res.text);
  t.is(res.body.resentFrom, row!.id);
  t.not(res.body.messageId, `<${row!.message_id}@acme.test>`);
  const mails = await mailsMatching(w.smtp, `Invoice ${invoice.invoiceNumber}`, 2);
  t.is(mails.length, 2);
  t.is(mails[0]!.parsed.text, mails[1]!.parsed.text);
  t.deepEqual(mails[1]!.to, [customer.email]);
  const audit = await w.app.db('audit_log').where({ action: 'email.resend', target_id: row!.id });
  t.is(audit.length, 1);
  const missing = await request(w.app.baseUrl, '/api/emails/00000000-0000-4000-8000-000000000000/resend', {
    method: 'POST',
    cookie: w.c.cookie,
  });
  t.is(missing.status, 404);
  t.is((await w.app.db('emails').where({ customer_id: customer.id })).length, 2);
});

test('GET /api/emails filters by customer, type and status; a bad filter is 400', async (t) => {
  const w = await startEmailsWorld({ SMTP_URL: '' });
  t.teardown(() => w.close());
  const customer = await insertCustomer(w.app.db);
  await makeInvoice(w.c, { customerId: customer.id });
  await emailRows(w.app, { customer_id: customer.id }, (r) => r[0]?.status === 'captured');
  const list = await request(
    w.app.baseUrl,
    `/api/emails?customerId=${customer.id}&type=invoice.issued&status=captured`,
    {
      cookie: w.c.cookie,
    },
  );
  t.is(list.status, 200, list.text);
  t.is(list.body.data?.length ?? list.body.length, 1);
  const none = await request(w.app.baseUrl, `/api/emails?customerId=${customer.id}&status=sent`, {
    cookie: w.c.cookie,
  });
  t.is(none.body.data?.length ?? none.body.length, 0);
  const bad = await request(w.app.baseUrl, '/api/emails?type=invoice.sent', { cookie: w.c.cookie });
  t.is(bad.status, 400);
  t.regex(bad.text, /must be one of/);
});
