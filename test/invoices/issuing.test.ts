/**
 * Issuing one invoice through the admin route: text that SQL or knex would read as syntax arrives exactly as sent,
 * the rows that carry the invoice number (events, audit, store credit applied) carry the number it took, and a
 * refused creation gives its number back and leaves no connection in a transaction.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { line, postInvoice } from './fixtures.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const HOSTILE = [
  `What? Why?? ?| ?& ?? $1 :name`,
  `O'Brien's "quoted" \\ back\\slash \\? \\\\? E'x' ); COMMIT; drop table invoices; --`,
  `tab\tnew\nline unicode é ✓ \u2028 {invoice-number:00000000-0000-4000-8000-000000000000}`,
];

test.serial(
  'line descriptions holding quotes, backslashes, "?", placeholders and SQL come back exactly, with the number in ' +
    'events and audit',
  async (t) => {
    const res = await postInvoice(app.baseUrl, cookie, app.db, {
      status: 'issued',
      lineItems: HOSTILE.map((d, i) => line(`${i + 1}.00`, 1, d)),
    });
    t.is(res.status, 201);
    t.deepEqual(
      res.body.lineItems.map((l: { description: string }) => l.description),
      HOSTILE,
    );
    const read = await request(app.baseUrl, `/api/billing/invoices/${res.body.id}`, { cookie });
    t.deepEqual(read.body, res.body);
    const number = res.body.invoiceNumber as string;
    t.regex(number, /^INV-\d{4}-\d{4,}$/);
    const events = await app.db('events').whereRaw("data->>'invoiceId' = ?", [res.body.id]).orderBy('created_at');
    t.deepEqual(
      events.map((e) => [e.type, e.data.invoiceNumber]),
      [['invoice.created', number]],
    );
    const audit = await app.db('audit_log').where({ target_type: 'invoice', target_id: res.body.id });
    t.is(audit.length, 1);
    t.is(audit[0].action, 'invoice.create');
    t.is(audit[0].after.invoiceNumber, number);
    t.is(audit[0].after.lineCount, 3);
    t.false(JSON.stringify([events, audit]).includes(`{invoice-number:${res.body.id}`), 'no placeholder is left');
  },
);

test.serial('an unknown customer is refused and its number comes back', async (t) => {
  const ok = await postInvoice(app.baseUrl, cookie, app.db);
  const refused = await request(app.baseUrl, '/api/billing/invoices', {
    cookie,
    body: { customerId: '00000000-0000-4000-8000-00000000beef', lineItems: [line('1.00')] },
  });
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'customer_not_found');
  const next = await postInvoice(app.baseUrl, cookie, app.db);
  const seq = (n: string) => Number(n.split('-')[2]);
  t.is(seq(next.body.invoiceNumber), seq(ok.body.invoiceNumber) + 1);
  const [counted] = await app
    .db('audit_log')
    .whereRaw("after->>'customerId' = ?", ['00000000-0000-4000-8000-00000000beef'])
    .count<{ n: string }[]>('* as n');
  t.is(Number(counted?.n), 0, 'the refused creation left no audit row');
});

test.serial(
  'store credit spent at creation is described by the number, and no connection is left in a transaction',
  async (t) => {
    const customer = await insertCustomer(app.db);
    await app
      .db('credit_ledger')
      .insert({ customer_id: customer.id, currency: 'USD', amount: '4.00', kind: 'credit', description: 'goodwill' });
    const res = await postInvoice(app.baseUrl, cookie, app.db, {
      customerId: customer.id,
      status: 'issued',
      lineItems: [line('10.00')],
    });
    t.is(res.status, 201);
    t.is(res.body.creditApplied, '4.00');
    const entry = await app.db('credit_ledger').where({ invoice_id: res.body.id }).first();
    t.is(entry.description, `Applied to ${res.body.invoiceNumber}`);
    // Every pooled connection ends up outside any transaction.
    const open = await app.db.raw(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    t.is(open.rows[0].n, 0);
  },
);
