/** C-17: CSV a spreadsheet reads: byte order mark, UTC date-times it parses, one row per refund, the new exports. */
import test from 'ava';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { issueCreditNote } from '../../src/settlement/service.ts';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, parseCsv, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

/** An export as the browser downloads it: the raw text (BOM included) and its type. */
async function download(path: string) {
  const { page, close } = await kit.adminPage('/admin');
  const got = await page.evaluate(async (p) => {
    const res = await fetch(p);
    const bytes = new Uint8Array(await res.arrayBuffer());
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      bytes: Array.from(bytes.slice(0, 3)),
      text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes),
    };
  }, path);
  await close();
  return got;
}

test('each export starts with a byte order mark; "Chloé" stays so; date-times read YYYY-MM-DD HH:MM:SS', async (t) => {
  const c = await customer(db(), 'Chloé Dupont');
  const at = new Date('2026-03-04T05:06:07Z');
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '12.00', at });
  await payManually(db(), invoice.id, '12.00', { at });
  for (const path of [
    `/admin/customers/export.csv?q=Chlo`,
    `/admin/invoices/export.csv?customerId=${c.id}`,
    `/admin/payments/export.csv?customerId=${c.id}`,
    `/admin/refunds/export.csv?customerId=${c.id}`,
    `/admin/credit-notes/export.csv?customerId=${c.id}`,
    `/admin/subscriptions/export.csv?customerId=${c.id}`,
    '/admin/audit-log/export.csv?targetType=invoice',
  ]) {
    const got = await download(path);
    t.is(got.status, 200, path);
    t.is(got.type, 'text/csv; charset=utf-8', path);
    t.deepEqual(got.bytes, [0xef, 0xbb, 0xbf], `${path} starts with the BOM`);
  }
  const invoices = parseCsv((await download(`/admin/invoices/export.csv?customerId=${c.id}`)).text.slice(1));
  const header = invoices[0]!;
  const row = Object.fromEntries(header.map((h, i) => [h, invoices[1]![i]]));
  t.is(row.customerName, 'Chloé Dupont');
  t.is(row['createdAt (UTC)'], '2026-03-04 05:06:07');
  t.is(row.dueDate, '2026-03-18');
  const payments = parseCsv((await download(`/admin/payments/export.csv?customerId=${c.id}`)).text.slice(1));
  t.false(payments[0]!.includes('refunds'), 'refunds have their own file');
  t.true(payments[0]!.includes('receivedAt (UTC)'));
});

test('refunds: one row per refund with its reason; credit notes with theirs', async (t) => {
  const c = await customer(db(), 'Refund Row Ltd');
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '50.00' });
  const payment = await payManually(db(), invoice.id, '50.00');
  for (const amount of ['5.00', '7.00'])
    await createRefund(
      db(),
      { paymentId: payment.id, amount, reason: `back ${amount}`, reasonCode: 'requested_by_customer' },
      SYSTEM_ACTOR,
      { config: kit.app.deps.config },
    );
  await issueCreditNote(
    db(),
    { invoiceId: invoice.id, amount: '3.00', reason: 'late', reasonCode: 'service_issue' },
    SYSTEM_ACTOR,
  );
  const refunds = parseCsv((await download(`/admin/refunds/export.csv?customerId=${c.id}`)).text.slice(1));
  const h = refunds[0]!;
  t.deepEqual(
    refunds
      .slice(1)
      .map((r) => [
        r[h.indexOf('invoiceNumber')],
        r[h.indexOf('amount')],
        r[h.indexOf('reasonCode')],
        r[h.indexOf('reason')],
      ]),
    [
      [invoice.invoice_number, '7.00', 'requested_by_customer', 'back 7.00'],
      [invoice.invoice_number, '5.00', 'requested_by_customer', 'back 5.00'],
    ],
  );
  const notes = parseCsv((await download(`/admin/credit-notes/export.csv?customerId=${c.id}`)).text.slice(1));
  const n = notes[0]!;
  t.deepEqual(
    notes
      .slice(1)
      .map((r) => [
        r[n.indexOf('invoiceNumber')],
        r[n.indexOf('amount')],
        r[n.indexOf('toStoreCredit')],
        r[n.indexOf('reasonCode')],
      ]),
    [[invoice.invoice_number, '3.00', '3.00', 'service_issue']],
  );
  const audit = parseCsv((await download(`/admin/audit-log/export.csv?targetId=${invoice.id}`)).text.slice(1));
  t.true(audit.length > 2);
  t.regex(audit[1]![1]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
});
