import test from 'ava';
import { invoicesExport } from '../../src/console/pages/invoices.tsx';
import { createInvoices } from '../../src/invoices/issue.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createEndpoint } from '../../src/webhooks/service.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { issueCreditNote } from '../../src/settlement/service.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import {
  customer,
  exportCsv,
  fetchText,
  fieldValue,
  invoiceFor,
  line,
  pageText,
  parseCsv,
  payManually,
  submitForm,
} from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const count = async (table: string, where: Record<string, string>) =>
  Number((await db()(table).where(where).count<{ n: string }[]>('* as n'))[0]!.n);
const day = (iso: string) => new Date(`${iso}T12:00:00Z`);
const exported = async (query: Record<string, string>) =>
  parseCsv(await exportCsv(invoicesExport, kit.app.deps, query));

// Serial tests run before the others: the database holds no invoice yet.
test.serial('C-4: the empty list says so, at 360 px without sideways scrolling', async (t) => {
  const { page, close } = await kit.adminPage('/admin/invoices', 360);
  t.is(await page.title(), 'Invoices · Billing console');
  t.is((await page.$$('h1')).length, 1);
  t.deepEqual(await texts(page, '.empty'), ['No invoices match.']);
  t.is(await page.$('table'), null);
  t.false(await scrollsSideways(page));
  await close();
});

test('the list shows number, customer, status, total, amount due, due date and created, newest first', async (t) => {
  const c = await customer(db(), 'Initech <b>Ltd</b>');
  const older = await invoiceFor(db(), c.id, { unitPrice: '1234.50', at: day('2026-03-01') });
  await payManually(db(), older.id, '234.50');
  const newer = await invoiceFor(db(), c.id, { unitPrice: '10.00', status: 'draft', at: day('2026-03-02') });
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}`);
  const rows = await page.$$eval('tbody tr', (trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent!.trim())),
  );
  t.deepEqual(rows, [
    [newer.invoice_number, 'Initech <b>Ltd</b>', 'draft', '10.00 USD', '10.00 USD', '', '2026-03-02 12:00 UTC'],
    [
      older.invoice_number,
      'Initech <b>Ltd</b>',
      'issued',
      '1,234.50 USD',
      '1,000.00 USD',
      older.due_date!.toISOString().slice(0, 10),
      '2026-03-01 12:00 UTC',
    ],
  ]);
  t.deepEqual(await page.$$eval('tbody tr td:first-child a', (as) => as.map((a) => a.getAttribute('href'))), [
    `/admin/invoices/${newer.id}`,
    `/admin/invoices/${older.id}`,
  ]);
  t.deepEqual(await page.$$eval('tbody tr td:nth-child(2) a', (as) => as.map((a) => a.getAttribute('href'))), [
    `/admin/customers/${c.id}`,
    `/admin/customers/${c.id}`,
  ]);
  await close();
});

test(
  'filters: status, customerId and created from/to (to includes its day), ' + 'kept in the form and the export link',
  async (t) => {
    const c = await customer(db());
    const early = await invoiceFor(db(), c.id, { at: new Date('2026-04-01T00:00:00Z') });
    const mid = await invoiceFor(db(), c.id, { status: 'draft', at: new Date('2026-04-02T23:59:59Z') });
    const late = await invoiceFor(db(), c.id, { at: new Date('2026-04-03T00:00:00Z') });
    const other = await invoiceFor(db(), (await customer(db())).id, { at: new Date('2026-04-02T10:00:00Z') });
    const numbers = async (query: string) => {
      const { page, close } = await kit.adminPage(`/admin/invoices?${query}`);
      const found = await texts(page, 'tbody tr td:first-child');
      const exportHref = await page.$eval('.export a', (a) => a.getAttribute('href'));
      await close();
      return { found, exportHref };
    };
    t.deepEqual((await numbers(`customerId=${c.id}`)).found, [
      late.invoice_number,
      mid.invoice_number,
      early.invoice_number,
    ]);
    t.deepEqual((await numbers(`customerId=${c.id}&status=draft`)).found, [mid.invoice_number]);
    t.deepEqual((await numbers(`customerId=${c.id}&status=issued`)).found, [late.invoice_number, early.invoice_number]);
    const ranged = await numbers(`customerId=${c.id}&from=2026-04-02&to=2026-04-02`);
    t.deepEqual(ranged.found, [mid.invoice_number]);
    t.is(ranged.exportHref, `/admin/invoices/export.csv?customerId=${c.id}&from=2026-04-02&to=2026-04-02`);
    t.deepEqual((await numbers('from=2026-04-02&to=2026-04-02')).found, [mid.invoice_number, other.invoice_number]);
    t.deepEqual((await numbers(`customerId=${c.id}&to=2026-04-01`)).found, [early.invoice_number]);

    const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&status=draft&from=2026-04-02`);
    t.is(await page.$eval('#filter-status', (s) => (s as HTMLSelectElement).value), 'draft');
    t.is(await page.$eval('#filter-customer', (s) => (s as HTMLInputElement).value), c.id);
    t.is(await page.$eval('#filter-from', (s) => (s as HTMLInputElement).value), '2026-04-02');
    await page.goto(`${kit.app.baseUrl}/admin/invoices?status=bogus`);
    t.regex(await pageText(page), /filter it does not understand/);
    await close();
  },
);

test('C-4: 50 a page, the next page by cursor keeps the filters', async (t) => {
  const c = await customer(db());
  for (let i = 0; i < 51; i += 1) await invoiceFor(db(), c.id, { status: 'draft', unitPrice: `${i + 1}.00` });
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&status=draft`);
  t.is((await page.$$('tbody tr')).length, 50);
  const next = await page.$eval('a[rel=next]', (a) => a.getAttribute('href')!);
  t.regex(next, new RegExp(`^/admin/invoices\\?status=draft&customerId=${c.id}&startingAfter=`));
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  t.deepEqual(await texts(page, 'tbody tr td:nth-child(4)'), ['1.00 USD']);
  t.is(await page.$('a[rel=next]'), null);
  await close();
});

test(
  'create: the form creates an invoice with its filled ' + 'lines and lands on its page with a confirmation',
  async (t) => {
    const c = await customer(db());
    const { page, close } = await kit.adminPage('/admin/invoices');
    await submitForm(page, '/admin/invoices', {
      customerId: c.id,
      currency: 'eur',
      dueDate: '2026-12-31',
      status: 'issued',
      taxRate: '10',
      'lineItems[0][description]': 'Consulting',
      'lineItems[0][quantity]': '3',
      'lineItems[0][unitPrice]': '100.00',
      'lineItems[2][description]': 'Travel',
      'lineItems[2][unitPrice]': '45.50',
    });
    const invoice = await db()('invoices').where({ customer_id: c.id }).first();
    t.truthy(invoice);
    t.is(new URL(page.url()).pathname, `/admin/invoices/${invoice.id}`);
    t.deepEqual(await texts(page, '.notice'), [`Invoice ${invoice.invoice_number} created (issued).`]);
    t.like(invoice, { status: 'issued', currency: 'EUR', tax_amount: '34.55', total: '380.05' });
    t.is(invoice.due_date.toISOString(), '2026-12-31T00:00:00.000Z');
    const lines = await db()('invoice_line_items').where({ invoice_id: invoice.id }).orderBy('position');
    t.deepEqual(
      lines.map((l) => [l.description, l.quantity, l.unit_price]),
      [
        ['Consulting', 3, '100.00'],
        ['Travel', 1, '45.50'],
      ],
    );
    await close();
  },
);

test(
  'create refused: an unknown customer or a bad price shows the service message, keeps what was typed, creates ' +
    'nothing',
  async (t) => {
    const { page, close } = await kit.adminPage('/admin/invoices');
    const unknown = '00000000-0000-4000-8000-000000000000';
    await submitForm(page, '/admin/invoices', {
      customerId: unknown,
      'lineItems[0][description]': 'Seats',
      'lineItems[0][quantity]': '2',
      'lineItems[0][unitPrice]': '9.99',
    });
    t.is(new URL(page.url()).pathname, '/admin/invoices');
    const [alert] = await texts(page, '.error');
    t.regex(alert!, new RegExp(`Customer ${unknown} does not exist`));
    t.regex(alert!, /customer_not_found/);
    t.is(await fieldValue(page, '/admin/invoices', 'customerId'), unknown);
    t.is(await fieldValue(page, '/admin/invoices', 'lineItems[0][description]'), 'Seats');
    t.is(await fieldValue(page, '/admin/invoices', 'lineItems[0][unitPrice]'), '9.99');
    t.true(await page.$eval('details', (d) => (d as HTMLDetailsElement).open));

    const c = await customer(db());
    await submitForm(page, '/admin/invoices', {
      customerId: c.id,
      'lineItems[0][description]': 'Seats',
      'lineItems[0][unitPrice]': '12,00',
    });
    const [bad] = await texts(page, '.error');
    t.regex(bad!, /invalid_request/);
    t.regex(bad!, /lineItems\.0\.unitPrice/);
    t.is(await fieldValue(page, '/admin/invoices', 'lineItems[0][unitPrice]'), '12,00');
    t.is(await count('invoices', { customer_id: unknown }), 0);
    t.is(await count('invoices', { customer_id: c.id }), 0);
    await close();
  },
);

test(
  'the invoice page shows header, lines, amounts, payments with refunds, credit notes, PDF link, events and ' +
    'deliveries',
  async (t) => {
    const { endpoint } = await createEndpoint(
      db(),
      { url: 'http://127.0.0.1:9/hooks/invoice-page', events: ['*'] },
      kit.app.deps.config,
      SYSTEM_ACTOR,
    );
    const c = await customer(db(), 'Umbrella Corp');
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '500.00' });
    const payment = await payManually(db(), invoice.id, '200.00', { method: 'bank_transfer', reference: 'wire-778' });
    await createRefund(db(), { paymentId: payment.id, amount: '50.00', reason: 'goodwill' }, SYSTEM_ACTOR, {
      config: kit.app.deps.config,
    });
    const note = await issueCreditNote(
      db(),
      { invoiceId: invoice.id, amount: '25.00', reason: 'late delivery' },
      SYSTEM_ACTOR,
    );
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    t.is(await page.title(), `Invoice ${invoice.invoice_number} · Billing console`);
    t.deepEqual(await texts(page, 'h1'), [`Invoice ${invoice.invoice_number}`]);
    const text = await pageText(page);
    for (const expected of [
      'Status issued',
      'Customer Umbrella Corp',
      'Widget 1 500.00 USD 500.00 USD',
      'Subtotal 500.00 USD',
      'Total 500.00 USD',
      'Credit applied 0.00 USD',
      'Credited (credit notes) 25.00 USD',
      'Amount paid 200.00 USD',
      'Amount due 275.00 USD',
      'Bank transfer wire-778 200.00 USD 50.00 USD partially refunded',
      'goodwill',
      `${note.number}`,
      'late delivery',
    ])
      t.true(text.includes(expected), expected);
    t.is(await page.$eval('a[href$="/pdf"]', (a) => a.getAttribute('href')), `/api/billing/invoices/${invoice.id}/pdf`);
    const events = await db()('events')
      .whereRaw(`data->>'invoiceId' = ?`, [invoice.id])
      .orderBy([{ column: 'created_at', order: 'desc' }]);
    t.deepEqual(
      events.map((e) => e.type),
      ['payment.succeeded', 'invoice.created'],
    );
    for (const e of events) t.true(text.includes(e.id), e.id);
    t.true(text.includes(`${endpoint.url}`), 'delivery endpoint');
    t.is((await texts(page, 'td')).filter((x) => x === 'pending').length, 2);
    await close();
  },
);

test('an unknown or malformed invoice id is a 404 page', async (t) => {
  const { page, close } = await kit.adminPage('/admin/invoices');
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const res = await page.goto(`${kit.app.baseUrl}/admin/invoices/${id}`);
    t.is(res!.status(), 404);
    t.deepEqual(await texts(page, 'h1'), ['Invoice not found']);
  }
  await close();
});

test(
  'status actions: draft to issued, issued to void, issued to paid; ' + 'the page offers only what the status allows',
  async (t) => {
    const c = await customer(db());
    const draft = await invoiceFor(db(), c.id, { status: 'draft' });
    const { page, close } = await kit.adminPage(`/admin/invoices/${draft.id}`);
    t.deepEqual(
      await page.$$eval('select[name=status] option', (os) => os.map((o) => (o as HTMLOptionElement).value)),
      ['issued', 'void'],
    );
    t.is(await page.$(`form[action="/admin/invoices/${draft.id}/payments"]`), null);
    await submitForm(page, `/admin/invoices/${draft.id}/status`, { status: 'issued' });
    t.is(new URL(page.url()).pathname, `/admin/invoices/${draft.id}`);
    t.deepEqual(await texts(page, '.notice'), [`Invoice ${draft.invoice_number} is now issued.`]);
    t.is((await db()('invoices').where({ id: draft.id }).first()).status, 'issued');
    await submitForm(page, `/admin/invoices/${draft.id}/status`, { status: 'void' });
    // Voiding writes off: it asks first (issue 34), and acts on the confirmation.
    t.is((await db()('invoices').where({ id: draft.id }).first()).status, 'issued');
    await submitForm(page, `/admin/invoices/${draft.id}/status`, {});
    t.deepEqual(await texts(page, '.notice'), [`Invoice ${draft.invoice_number} is now void.`]);
    t.is((await db()('invoices').where({ id: draft.id }).first()).status, 'void');
    t.is(await page.$('form[action$="/status"]'), null);

    const issued = await invoiceFor(db(), c.id);
    await page.goto(`${kit.app.baseUrl}/admin/invoices/${issued.id}`);
    await submitForm(page, `/admin/invoices/${issued.id}/status`, { status: 'paid' });
    await submitForm(page, `/admin/invoices/${issued.id}/status`, {});
    t.deepEqual(await texts(page, '.notice'), [`Invoice ${issued.invoice_number} is now paid.`]);
    t.is((await db()('invoices').where({ id: issued.id }).first()).status, 'paid');
    await close();
  },
);

test('status refused: the service message shows in the open form and nothing changes', async (t) => {
  const c = await customer(db());
  const invoice = await invoiceFor(db(), c.id);
  await payManually(db(), invoice.id, '10.00');
  const before = await db()('invoices').where({ id: invoice.id }).first();
  const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
  await submitForm(page, `/admin/invoices/${invoice.id}/status`, { status: 'void' });
  t.is(new URL(page.url()).pathname, `/admin/invoices/${invoice.id}/status`);
  t.regex((await texts(page, '.error'))[0]!, /An invoice with payments cannot be voided.*invoice_has_payments/);
  t.true(await page.$eval(`form[action$="/status"]`, (f) => (f.closest('details') as HTMLDetailsElement).open));
  t.is(await fieldValue(page, `/admin/invoices/${invoice.id}/status`, 'status'), 'void');
  t.deepEqual(await db()('invoices').where({ id: invoice.id }).first(), before);

  // A move the page does not offer (paid -> issued) is still the service's to refuse.
  const paid = await invoiceFor(db(), c.id);
  await payManually(db(), paid.id, '100.00');
  await page.goto(`${kit.app.baseUrl}/admin/invoices/${paid.id}`);
  t.is(await page.$('form[action$="/status"]'), null);
  const csrf = await page.$eval('input[name=_csrf]', (i) => (i as HTMLInputElement).value);
  await page.evaluate(
    (id, csrf) => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = `/admin/invoices/${id}/status`;
      for (const [name, value] of [
        ['_csrf', csrf],
        ['_form', 'invoice-status'],
        ['status', 'issued'],
      ]) {
        const input = document.createElement('input');
        input.name = name!;
        input.value = value!;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    },
    paid.id,
    csrf,
  );
  await page.waitForNavigation();
  t.regex((await texts(page, '.error'))[0]!, /An invoice cannot go from paid to issued.*invalid_status_transition/);
  t.is((await db()('invoices').where({ id: paid.id }).first()).status, 'paid');
  await close();
});

test(
  'payment: recorded from the page; ' + 'refused above the amount due with the service message and nothing recorded',
  async (t) => {
    const c = await customer(db());
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '80.00' });
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    const action = `/admin/invoices/${invoice.id}/payments`;
    t.is(await fieldValue(page, action, 'amount'), '80.00');
    await submitForm(page, action, { amount: '30.00', paymentMethod: 'bank_transfer', providerReference: 'wire-1' });
    t.deepEqual(await texts(page, '.notice'), ['Payment of 30.00 USD recorded.']);
    t.like(await db()('payments').where({ invoice_id: invoice.id }).first(), {
      amount: '30.00',
      payment_method: 'bank_transfer',
      provider_reference: 'wire-1',
    });
    t.true((await pageText(page)).includes('Amount due 50.00 USD'));

    const payments = await count('payments', { invoice_id: invoice.id });
    await submitForm(page, action, { amount: '50.01', paymentMethod: 'manual', providerReference: 'typed-ref' });
    t.regex((await texts(page, '.error'))[0]!, /at most the amount due, 50\.00 USD.*amount_exceeds_due/);
    t.is(await fieldValue(page, action, 'amount'), '50.01');
    t.is(await fieldValue(page, action, 'providerReference'), 'typed-ref');
    t.is(await page.$eval('#f-invoice-payment-amount', (i) => i.getAttribute('aria-invalid')), 'true');
    t.is(await count('payments', { invoice_id: invoice.id }), payments);
    t.is((await db()('invoices').where({ id: invoice.id }).first()).amount_paid, '30.00');
    await close();
  },
);

test(
  'credit note: issued from the page; ' + 'refused above the invoice total with the service message and nothing issued',
  async (t) => {
    const c = await customer(db());
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '40.00' });
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    const action = `/admin/invoices/${invoice.id}/credit-notes`;
    await submitForm(page, action, { amount: '15.00', reason: 'damaged' });
    const note = await db()('credit_notes').where({ invoice_id: invoice.id }).first();
    t.deepEqual(await texts(page, '.notice'), [`Credit note ${note.number} of 15.00 USD issued.`]);
    t.is((await db()('invoices').where({ id: invoice.id }).first()).credited_amount, '15.00');

    const notes = await count('credit_notes', { invoice_id: invoice.id });
    await submitForm(page, action, { amount: '30.00', reason: 'too much' });
    t.regex((await texts(page, '.error'))[0]!, /amount_exceeds_invoice/);
    t.is(await fieldValue(page, action, 'reason'), 'too much');
    t.is(await count('credit_notes', { invoice_id: invoice.id }), notes);
    t.is((await db()('invoices').where({ id: invoice.id }).first()).credited_amount, '15.00');
    await close();
  },
);

test(
  'refund: beside its payment; ' + 'refused beyond what is left, on the invoice page, with nothing refunded',
  async (t) => {
    const c = await customer(db());
    const invoice = await invoiceFor(db(), c.id, { unitPrice: '60.00' });
    const payment = await payManually(db(), invoice.id, '60.00', { method: 'manual' });
    const { page, close } = await kit.adminPage(`/admin/invoices/${invoice.id}`);
    const action = `/admin/payments/${payment.id}/refunds`;
    await submitForm(page, action, { amount: '20.00', reason: 'partial return' });
    await submitForm(page, action, {});
    t.is(new URL(page.url()).pathname, `/admin/invoices/${invoice.id}`);
    t.deepEqual(await texts(page, '.notice'), ['Refund of 20.00 USD recorded.']);
    t.like(await db()('payments').where({ id: payment.id }).first(), {
      refunded_amount: '20.00',
      status: 'partially_refunded',
    });

    const refunds = await count('refunds', { payment_id: payment.id });
    await submitForm(page, action, { amount: '40.01', reason: 'everything' });
    t.is(new URL(page.url()).pathname, action);
    t.deepEqual(await texts(page, 'h1'), [`Invoice ${invoice.invoice_number}`]);
    t.regex((await texts(page, '.error'))[0]!, /at most what is left to refund, 40\.00 USD.*amount_exceeds_refundable/);
    t.is(await fieldValue(page, action, 'amount'), '40.01');
    t.true(await page.$eval(`form[action="${action}"]`, (f) => (f.closest('details') as HTMLDetailsElement).open));
    t.is(await count('refunds', { payment_id: payment.id }), refunds);
    t.is((await db()('payments').where({ id: payment.id }).first()).refunded_amount, '20.00');

    await page.goto(`${kit.app.baseUrl}/admin/invoices/${invoice.id}`);
    await submitForm(page, action, { amount: '40.00', reason: 'the rest' });
    await submitForm(page, action, {});
    t.is((await db()('payments').where({ id: payment.id }).first()).status, 'refunded');
    t.is(await page.$(`form[action="${action}"]`), null, 'nothing left to refund: no form');
    await close();
  },
);

test(
  'CSV export: every row with the filters, a header, ' + 'decimal amounts, ISO timestamps and the formula guard',
  async (t) => {
    const c = await customer(db(), '=HYPERLINK("http://evil")');
    const first = await invoiceFor(db(), c.id, { unitPrice: '1234.5', at: new Date('2026-05-01T08:00:00Z') });
    await payManually(db(), first.id, '34.50');
    const second = await invoiceFor(db(), c.id, {
      status: 'draft',
      unitPrice: '7',
      at: new Date('2026-05-03T08:00:00Z'),
      currency: 'JPY',
    });
    const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}&status=issued`);
    t.is(
      await page.$eval('.export a', (a) => a.getAttribute('href')),
      `/admin/invoices/export.csv?status=issued&customerId=${c.id}`,
    );
    await close();
    const [header, ...rows] = await exported({ customerId: c.id });
    t.deepEqual(header, [
      'id',
      'number',
      'customerId',
      'customerName',
      'status',
      'currency',
      'subtotal',
      'taxRate',
      'taxAmount',
      'total',
      'amountPaid',
      'creditApplied',
      'creditedAmount',
      'amountDue',
      'dueDate',
      'issuedAt (UTC)',
      'paidAt (UTC)',
      'voidedAt (UTC)',
      'createdAt (UTC)',
    ]);
    const col = (row: string[], name: string) => row[header!.indexOf(name)];
    t.deepEqual(
      rows.map((r) => col(r, 'number')),
      [second.invoice_number, first.invoice_number],
    );
    t.is(col(rows[1]!, 'customerName'), `'=HYPERLINK("http://evil")`);
    t.is(col(rows[1]!, 'total'), '1234.50');
    t.is(col(rows[1]!, 'amountPaid'), '34.50');
    t.is(col(rows[1]!, 'amountDue'), '1200.00');
    t.is(col(rows[1]!, 'createdAt (UTC)'), '2026-05-01 08:00:00');
    t.is(col(rows[1]!, 'dueDate'), first.due_date!.toISOString().slice(0, 10));
    t.is(col(rows[0]!, 'total'), '7');
    t.is(col(rows[0]!, 'dueDate'), '');
    t.deepEqual(
      (await exported({ customerId: c.id, status: 'draft' })).slice(1).map((r) => col(r, 'number')),
      [second.invoice_number],
    );
    t.deepEqual(
      (await exported({ customerId: c.id, from: '2026-05-01', to: '2026-05-01' }))
        .slice(1)
        .map((r) => col(r, 'number')),
      [first.invoice_number],
    );
    t.deepEqual(
      (await exported({ customerId: c.id, from: '2026-05-02' })).slice(1).map((r) => col(r, 'number')),
      [second.invoice_number],
    );
  },
);

test('CSV export walks every row in keyset batches: more than one batch, none twice, newest first', async (t) => {
  const c = await customer(db());
  const many = Array.from({ length: 501 }, (_, i) => ({
    customerId: c.id,
    currency: 'USD',
    status: 'draft' as const,
    lineItems: [line(`${i + 1}.00`)],
  }));
  await db().transaction((trx) => createInvoices(trx, many, { now: new Date('2026-06-01T00:00:00Z') }));
  const rows = (await exported({ customerId: c.id })).slice(1);
  t.is(rows.length, 501);
  t.is(new Set(rows.map((r) => r[0])).size, 501);
});

test('CSV export over HTTP: text/csv, the same rows as the export writes', async (t) => {
  const c = await customer(db());
  await invoiceFor(db(), c.id);
  const { page, close } = await kit.adminPage('/admin/invoices');
  const res = await fetchText(page, `/admin/invoices/export.csv?customerId=${c.id}`);
  await close();
  t.is(res.status, 200);
  t.is(res.type, 'text/csv; charset=utf-8');
  t.is(res.text, await exportCsv(invoicesExport, kit.app.deps, { customerId: c.id }));
});

test('C-8: list and invoice page at 360 px do not scroll sideways; one h1; the nav is there', async (t) => {
  const c = await customer(db(), 'A customer with a rather long name that must wrap somewhere sensible');
  const invoice = await invoiceFor(db(), c.id);
  await payManually(db(), invoice.id, '10.00', {
    reference: 'a-very-long-provider-reference-without-any-spaces-0123456789',
  });
  for (const path of [`/admin/invoices?customerId=${c.id}`, `/admin/invoices/${invoice.id}`]) {
    const { page, close } = await kit.adminPage(path, 360);
    await page.evaluate(() =>
      document.querySelectorAll('details').forEach((d) => {
        d.open = true;
      }),
    );
    t.false(await scrollsSideways(page), path);
    t.is((await page.$$('h1')).length, 1, path);
    t.true((await texts(page, 'nav a')).includes('Invoices'));
    await close();
  }
});
