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

test('C-15: a customer picked by name on the invoices list; several offer a choice; totals per currency', async (t) => {
  const one = await customer(db(), 'Quetzal Partners');
  const two = await customer(db(), 'Quetzal Holdings');
  await invoiceFor(db(), one.id, { unitPrice: '10.00' });
  await invoiceFor(db(), one.id, { unitPrice: '15.50' });
  await invoiceFor(db(), two.id, { unitPrice: '99.00', currency: 'EUR' });
  const { page, close } = await kit.adminPage('/admin/invoices?customer=quetzal partners');
  // The walk-through: "typing a name leads to an error page and loses the filters".
  t.deepEqual(await texts(page, 'h1'), ['Invoices']);
  t.is((await texts(page, 'tbody tr')).length, 2);
  t.deepEqual(await texts(page, '.totals li'), ['2 invoices · total 25.50 USD · amount due 25.50 USD']);
  await page.goto(`${kit.app.baseUrl}/admin/invoices?customer=quetzal&status=issued`);
  t.regex((await texts(page, '.choice p'))[0]!, /Several customers match “quetzal”: choose one\./);
  t.deepEqual((await texts(page, '.choice a')).sort(), ['Quetzal Holdings', 'Quetzal Partners']);
  await Promise.all([page.waitForNavigation(), page.click(`.choice a[href*="${two.id}"]`)]);
  const url = new URL(page.url());
  t.is(url.searchParams.get('customerId'), two.id);
  t.is(url.searchParams.get('status'), 'issued', 'the other filters are kept');
  t.deepEqual(await texts(page, '.totals li'), ['1 invoice · total 99.00 EUR · amount due 99.00 EUR']);
  await page.goto(`${kit.app.baseUrl}/admin/payments?customer=nobody-by-that-name`);
  t.deepEqual(await texts(page, 'h1'), ['Payments']);
  t.regex((await texts(page, '.empty'))[0]!, /No customer matches “nobody-by-that-name”/);
  await close();
});
