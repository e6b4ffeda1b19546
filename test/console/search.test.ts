/** C-15: the top bar's search finds invoices by number, customers by name, licenses by key, payments by reference. */
import test from 'ava';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, payManually } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

test('the top bar search finds an invoice by number and a payment by reference, each a link', async (t) => {
  const c = await customer(db(), 'Zanzibar Trading');
  const invoice = await invoiceFor(db(), c.id, { unitPrice: '42.00' });
  await payManually(db(), invoice.id, '2.00', { method: 'bank_transfer', reference: 'WIRE-ZZ-991' });
  const { page, close } = await kit.adminPage('/admin/invoices');
  await page.type('#top-search', invoice.invoice_number.toLowerCase());
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  t.is(new URL(page.url()).pathname, '/admin/search');
  t.deepEqual(await texts(page, 'h1'), ['Search']);
  t.is(await page.$eval(`a[href="/admin/invoices/${invoice.id}"]`, (a) => a.textContent), invoice.invoice_number);
  await page.goto(`${kit.app.baseUrl}/admin/search?q=zanzibar`);
  t.is(await page.$eval(`a[href="/admin/customers/${c.id}"]`, (a) => a.textContent), 'Zanzibar Trading');
  await page.goto(`${kit.app.baseUrl}/admin/search?q=wire-zz`);
  t.is(await page.$eval(`main a[href="/admin/invoices/${invoice.id}"]`, (a) => a.textContent), 'WIRE-ZZ-991');
  await page.goto(`${kit.app.baseUrl}/admin/search?q=nothing-like-this`);
  t.deepEqual(await texts(page, '.empty'), [
    'No invoices match.',
    'No customers match.',
    'No licenses match.',
    'No payments match.',
  ]);
  await close();
});
