import test from 'ava';
import { createInvoice } from '../../src/invoices/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { line } from './fixtures.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const seqOf = (n: string) => Number(n.split('-')[2]);

test.serial('100 invoices created concurrently get 100 distinct numbers with no gap', async (t) => {
  const customer = await insertCustomer(app.db);
  const year = new Date().getUTCFullYear();
  const answers = await Promise.all(
    Array.from({ length: 100 }, () =>
      request(app.baseUrl, '/api/billing/invoices', {
        cookie,
        body: { customerId: customer.id, lineItems: [line('1.00')] },
      }),
    ),
  );
  t.true(
    answers.every((a) => a.status === 201),
    answers.find((a) => a.status !== 201)?.text,
  );
  const numbers = answers.map((a) => a.body.invoiceNumber as string);
  for (const n of numbers) t.regex(n, new RegExp(`^INV-${year}-\\d{4}$`));
  const seqs = numbers.map(seqOf).sort((a, b) => a - b);
  t.deepEqual(
    seqs,
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
});

test.serial('a failed creation gives its number back: the sequence stays gapless', async (t) => {
  const before = await app.db('invoices').max('invoice_number as n').first();
  const customer = await insertCustomer(app.db);
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      const taken = await createInvoice(
        trx,
        { customerId: customer.id, lineItems: [line('1.00')], currency: 'USD', status: 'issued' },
        SYSTEM_ACTOR,
      );
      t.is(seqOf(taken.invoice.invoice_number), seqOf(before!.n) + 1);
      throw new Error('roll back after the number was taken');
    }),
  );
  const good = await request(app.baseUrl, '/api/billing/invoices', {
    cookie,
    body: { customerId: customer.id, lineItems: [line('1.00')] },
  });
  t.is(seqOf(good.body.invoiceNumber), seqOf(before!.n) + 1);
});

test.serial('the sequence restarts at 0001 in a new year and keeps counting in the old one', async (t) => {
  const customer = await insertCustomer(app.db);
  const input = { customerId: customer.id, lineItems: [line('5.00')], currency: 'USD', status: 'draft' as const };
  const a = await createInvoice(app.db, input, SYSTEM_ACTOR, { now: new Date('2031-12-31T23:59:59Z') });
  const b = await createInvoice(app.db, input, SYSTEM_ACTOR, { now: new Date('2032-01-01T00:00:00Z') });
  const c = await createInvoice(app.db, input, SYSTEM_ACTOR, { now: new Date('2032-06-01T00:00:00Z') });
  const d = await createInvoice(app.db, input, SYSTEM_ACTOR, { now: new Date('2031-12-31T23:59:59Z') });
  t.is(a.invoice.invoice_number, 'INV-2031-0001');
  t.is(b.invoice.invoice_number, 'INV-2032-0001');
  t.is(c.invoice.invoice_number, 'INV-2032-0002');
  t.is(d.invoice.invoice_number, 'INV-2031-0002');
});

test.serial('past 9999 the sequence grows wider', async (t) => {
  await app.db('document_counters').insert({ kind: 'INV', year: 2040, last_seq: 9999 });
  const customer = await insertCustomer(app.db);
  const created = await createInvoice(
    app.db,
    { customerId: customer.id, lineItems: [line('1.00')], currency: 'USD', status: 'draft' },
    SYSTEM_ACTOR,
    { now: new Date('2040-03-01T00:00:00Z') },
  );
  t.is(created.invoice.invoice_number, 'INV-2040-10000');
});
