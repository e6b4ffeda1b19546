import test from 'ava';
import { createCreditNote } from '../../src/credit-notes/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, pay, readInvoice, snapshot, type Ctx } from '../payments/fixtures.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

/** A credit note; the reason C-14 requires is given unless the test names its own. */
const note = (body: Record<string, unknown>) =>
  request(c.baseUrl, '/api/billing/credit-notes', { cookie: c.cookie, body: { reason: 'Goodwill', ...body } });
const balanceOf = async (customerId: string) =>
  (await request(c.baseUrl, `/api/customers/${customerId}`, { cookie: c.cookie })).body.creditBalance;
const YEAR = new Date().getUTCFullYear();

test('on an unpaid invoice a credit note lowers the amount due; crediting the rest makes it paid', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  const res = await note({ invoiceId: invoice.id, amount: '30.00', reason: 'Late delivery' });
  t.is(res.status, 201, res.text);
  t.regex(res.body.number, new RegExp(`^CN-${YEAR}-\\d{4}$`));
  t.like(res.body, {
    invoiceId: invoice.id,
    customerId: invoice.customerId,
    amount: '30.00',
    currency: 'USD',
    reason: 'Late delivery',
    creditedToInvoice: '30.00',
    creditedToBalance: '0.00',
  });
  for (const key of ['id', 'number', 'invoiceId', 'amount', 'reason', 'createdAt']) t.true(key in res.body, key);
  t.like(await readInvoice(c, invoice.id), { status: 'issued', creditedAmount: '30.00', amountDue: '70.00' });

  const rest = await note({ invoiceId: invoice.id, amount: '70.00', reasonCode: 'service_issue' });
  t.is(rest.status, 201);
  t.like(rest.body, { reason: 'Goodwill', reasonCode: 'service_issue' });
  // C-14: a credit note needs a reason in words; the code, when given, is one of the closed list.
  for (const [body, path] of [
    [{ reason: '  ' }, 'reason'],
    [{ reason: null }, 'reason'],
    [{ reasonCode: 'because' }, 'reasonCode'],
  ] as const) {
    const refused = await note({ invoiceId: invoice.id, amount: '1.00', ...body });
    t.is(refused.status, 400);
    t.is(refused.body.error.details[0].path, path);
  }
  const paid = await readInvoice(c, invoice.id);
  t.like(paid, { status: 'paid', creditedAmount: '100.00', amountDue: '0.00' });
  t.truthy(paid.paidAt);
  t.truthy(
    await app.db('events').where({ type: 'invoice.paid' }).whereRaw("data->>'invoiceId' = ?", [invoice.id]).first(),
  );
  t.is(await balanceOf(invoice.customerId), '0.00');
});

test('an overdue invoice is creditable', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  await app.db('invoices').where({ id: invoice.id }).update({ status: 'overdue' });
  t.is((await note({ invoiceId: invoice.id, amount: '4.00' })).status, 201);
  t.like(await readInvoice(c, invoice.id), { status: 'overdue', amountDue: '6.00' });
});

test('on a partly paid invoice the part beyond the amount due goes to the credit balance', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  await pay(c, { invoiceId: invoice.id, amount: '80.00' });
  const res = await note({ invoiceId: invoice.id, amount: '50.00' });
  t.is(res.status, 201);
  t.like(res.body, { amount: '50.00', creditedToInvoice: '20.00', creditedToBalance: '30.00' });
  t.like(await readInvoice(c, invoice.id), {
    status: 'paid',
    amountPaid: '80.00',
    creditedAmount: '20.00',
    amountDue: '0.00',
  });
  t.is(await balanceOf(invoice.customerId), '30.00');
  const entry = await app.db('credit_ledger').where({ customer_id: invoice.customerId }).first();
  t.like(entry, { kind: 'credit_note', amount: '30.00', invoice_id: invoice.id, credit_note_id: res.body.id });
});

test(
  "on a paid invoice a credit note adds to the customer's credit balance, " + 'spent on open invoices oldest first',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const paidInvoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '60.00' });
    await pay(c, { invoiceId: paidInvoice.id, amount: '60.00' });
    const res = await note({ invoiceId: paidInvoice.id, amount: '40.00', reason: 'Price adjustment' });
    t.is(res.status, 201);
    t.like(res.body, { creditedToInvoice: '0.00', creditedToBalance: '40.00' });
    t.like(await readInvoice(c, paidInvoice.id), { status: 'paid', creditedAmount: '0.00', amountPaid: '60.00' });
    t.is(await balanceOf(customer.id), '40.00');

    const open = await makeInvoice(c, { customerId: customer.id, unitPrice: '25.00' });
    t.like(open, { status: 'paid', creditApplied: '25.00' });
    t.is(await balanceOf(customer.id), '15.00');

    const older = await makeInvoice(c, { customerId: customer.id, unitPrice: '50.00' });
    const newer = await makeInvoice(c, { customerId: customer.id, unitPrice: '50.00' });
    t.is(older.creditApplied, '15.00');
    t.is((await note({ invoiceId: paidInvoice.id, amount: '20.00' })).status, 201);
    t.like(await readInvoice(c, older.id), { creditApplied: '35.00', amountDue: '15.00' });
    t.like(await readInvoice(c, newer.id), { creditApplied: '0.00', amountDue: '50.00' });
    t.is(await balanceOf(customer.id), '0.00');
  },
);

test('credit notes number CN-{YEAR}-{SEQ} apart from invoices and restart each year', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  const a = await createCreditNote(app.db, { invoiceId: invoice.id, amount: '1.00', reason: null }, SYSTEM_ACTOR, {
    now: new Date('2031-06-01T00:00:00Z'),
  });
  const b = await createCreditNote(app.db, { invoiceId: invoice.id, amount: '1.00', reason: null }, SYSTEM_ACTOR, {
    now: new Date('2031-12-31T23:59:59Z'),
  });
  const d = await createCreditNote(app.db, { invoiceId: invoice.id, amount: '1.00', reason: null }, SYSTEM_ACTOR, {
    now: new Date('2032-01-01T00:00:00Z'),
  });
  t.deepEqual([a.number, b.number, d.number], ['CN-2031-0001', 'CN-2031-0002', 'CN-2032-0001']);
});

test('10 concurrent credit notes on one invoice stay within its total, with gapless numbers', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  const answers = await Promise.all(
    Array.from({ length: 10 }, () =>
      createCreditNote(app.db, { invoiceId: invoice.id, amount: '20.00', reason: null }, SYSTEM_ACTOR, {
        now: new Date('2040-03-01T00:00:00Z'),
      }).then(
        (row) => ({ ok: true as const, row }),
        (error: { code?: string }) => ({ ok: false as const, code: error.code }),
      ),
    ),
  );
  const made = answers.filter((a) => a.ok);
  t.is(made.length, 5);
  t.true(answers.filter((a) => !a.ok).every((a) => a.code === 'amount_exceeds_invoice'));
  t.deepEqual(made.map((a) => a.row.number).sort(), [
    'CN-2040-0001',
    'CN-2040-0002',
    'CN-2040-0003',
    'CN-2040-0004',
    'CN-2040-0005',
  ]);
  t.like(await readInvoice(c, invoice.id), { status: 'paid', creditedAmount: '100.00' });
});

test('concurrent credit notes with overflow on two invoices of one customer do not deadlock', async (t) => {
  const customer = await insertCustomer(app.db);
  const invoices = await Promise.all(
    Array.from({ length: 4 }, () => makeInvoice(c, { customerId: customer.id, unitPrice: '10.00' })),
  );
  for (const i of invoices) await pay(c, { invoiceId: i.id, amount: '9.00' });
  const answers = await Promise.all(
    invoices.flatMap((i) => [note({ invoiceId: i.id, amount: '5.00' }), note({ invoiceId: i.id, amount: '5.00' })]),
  );
  t.true(
    answers.every((r) => r.status === 201),
    answers.map((r) => r.text).join('\n'),
  );
  // Each invoice: 1.00 closes it, 9.00 goes to the balance; with nothing left open, all of it stays.
  t.is(await balanceOf(customer.id), '36.00');
});

test('GET /api/billing/credit-notes lists by invoice', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '10.00' });
  await note({ invoiceId: invoice.id, amount: '1.00' });
  await note({ invoiceId: invoice.id, amount: '2.00' });
  const list = await request(app.baseUrl, `/api/billing/credit-notes?invoiceId=${invoice.id}`, { cookie: c.cookie });
  t.deepEqual(
    list.body.map((n: { amount: string }) => n.amount),
    ['1.00', '2.00'],
  );
  t.is((await request(app.baseUrl, '/api/billing/credit-notes?invoiceId=1', { cookie: c.cookie })).status, 400);
  t.is((await request(app.baseUrl, '/api/billing/credit-notes')).status, 401);
});

for (const state of ['draft', 'void'] as const) {
  test.serial(
    `a ${state} invoice is not creditable: 409 invoice_not_creditable, nothing changed (not even a number)`,
    async (t) => {
      const invoice = await makeInvoice(c, { status: 'draft' });
      if (state === 'void')
        await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
          method: 'PUT',
          cookie: c.cookie,
          body: { status: 'void' },
        });
      const before = await snapshot(app.db);
      const res = await note({ invoiceId: invoice.id, amount: '1.00' });
      t.is(res.status, 409);
      t.is(res.body.error.code, 'invoice_not_creditable');
      t.deepEqual(await snapshot(app.db), before);
    },
  );
}

const ZERO_UUID = '00000000-0000-4000-8000-000000000000';
const refusals: [string, (id: string) => Record<string, unknown>, string, string?][] = [
  ['a JSON number amount', (id) => ({ invoiceId: id, amount: 1 }), 'invalid_request', 'not a JSON number'],
  ['an exponent amount "1.5e3"', (id) => ({ invoiceId: id, amount: '1.5e3' }), 'invalid_request'],
  ['a word for an amount', (id) => ({ invoiceId: id, amount: 'NaN' }), 'invalid_request'],
  ['a zero amount', (id) => ({ invoiceId: id, amount: '0.00' }), 'invalid_request'],
  ['a negative amount', (id) => ({ invoiceId: id, amount: '-1.00' }), 'invalid_request'],
  ['more decimals than USD has', (id) => ({ invoiceId: id, amount: '1.001' }), 'invalid_amount'],
  [
    'more than the invoice total',
    (id) => ({ invoiceId: id, amount: '100.01' }),
    'amount_exceeds_invoice',
    "at most what the invoice's credit notes have left of its total, 100.00 USD",
  ],
  ['an unknown invoice', () => ({ invoiceId: ZERO_UUID, amount: '1.00' }), 'invoice_not_found'],
  ['a malformed invoice id', () => ({ invoiceId: 'INV-1', amount: '1.00' }), 'invalid_request'],
];
for (const [name, body, code, message] of refusals) {
  test.serial(`refused: ${name} -> 400 ${code}, nothing changed`, async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '100.00' });
    const before = await snapshot(app.db);
    const res = await note(body(invoice.id));
    t.is(res.status, 400, res.text);
    t.is(res.body.error.code, code);
    if (message) t.true(res.body.error.message.includes(message), res.body.error.message);
    t.deepEqual(await snapshot(app.db), before);
  });
}

test.serial('credit notes together stay within the invoice total, paid or not', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  t.is((await note({ invoiceId: invoice.id, amount: '60.00' })).status, 201);
  const before = await snapshot(app.db);
  const over = await note({ invoiceId: invoice.id, amount: '40.01' });
  t.is(over.status, 400);
  t.is(over.body.error.code, 'amount_exceeds_invoice');
  t.deepEqual(await snapshot(app.db), before);
  t.is((await note({ invoiceId: invoice.id, amount: '40.00' })).status, 201);
  t.is((await readInvoice(c, invoice.id)).status, 'paid');
  t.is((await note({ invoiceId: invoice.id, amount: '0.01' })).body.error.code, 'amount_exceeds_invoice');
});
