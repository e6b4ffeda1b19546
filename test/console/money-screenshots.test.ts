/**
 * The invoice page after each money action of issue 34 (mark paid, a payment, a refund, a credit note, store
 * credit), as a finance person walks them in Chromium, each confirmed on the page. With MONEY_SCREENSHOTS=1 each
 * page is also saved at 1280 and 360 px as docs/screenshots/money-<step>.png and money-<step>-360.png (a plain test
 * run leaves the tree as it was).
 */
import path from 'node:path';
import test from 'ava';
import type { Page } from 'puppeteer';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, pageText, submitForm } from './invoices-fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

const shots = path.resolve(import.meta.dirname, '../../docs/screenshots');
const amounts = (page: Page) =>
  page.$$eval('dl.amounts dt', (dts) =>
    Object.fromEntries(dts.map((dt) => [dt.textContent!.trim(), dt.nextElementSibling!.textContent!.trim()])),
  );

/** The page as it is now at 1280 px, and again at 360 px (same URL, a fresh page) when screenshots are asked for. */
async function shoot(page: Page, name: string): Promise<void> {
  if (process.env.MONEY_SCREENSHOTS !== '1') return;
  await page.screenshot({ path: path.join(shots, `money-${name}.png`), fullPage: true });
  const narrow = await kit.adminPage(new URL(page.url()).pathname, 360);
  await narrow.page.screenshot({ path: path.join(shots, `money-${name}-360.png`), fullPage: true });
  await narrow.close();
}

test('each money action leaves the invoice page saying what happened, with the amounts that follow', async (t) => {
  const c = await customer(kit.app.db, 'Chloé Martin');
  const small = await invoiceFor(kit.app.db, c.id, { unitPrice: '99.00' });
  const big = await invoiceFor(kit.app.db, c.id, { unitPrice: '200.00' });
  const smallUrl = `/admin/invoices/${small.id}`;
  const bigUrl = `/admin/invoices/${big.id}`;
  const { page, close } = await kit.adminPage(smallUrl);

  await submitForm(page, `${smallUrl}/status`, { status: 'paid', note: 'Cheque 004512' });
  await submitForm(page, `${smallUrl}/status`, {});
  t.regex(await pageText(page), /is now paid\./);
  t.like(await amounts(page), { 'Amount paid': '99.00 USD', 'Amount due': '0.00 USD' });
  await shoot(page, 'mark-paid');

  await page.goto(kit.app.baseUrl + bigUrl);
  await submitForm(page, `${bigUrl}/payments`, {
    amount: '120.00',
    paymentMethod: 'bank_transfer',
    providerReference: 'WIRE-2026-11-0042',
  });
  t.regex(await pageText(page), /Payment of 120\.00 USD recorded/);
  t.like(await amounts(page), { 'Amount due': '80.00 USD' });
  await shoot(page, 'payment');

  const refundAction = await page.$eval('form[action$="/refunds"]', (f) => f.getAttribute('action')!);
  await submitForm(page, refundAction, {
    amount: '20.00',
    reason: 'Seat removed',
    reasonCode: 'requested_by_customer',
  });
  await submitForm(page, refundAction, {});
  t.regex(await pageText(page), /Refund of 20\.00 USD recorded/);
  t.regex(await pageText(page), /Requested by customer: Seat removed/);
  await shoot(page, 'refund');

  await submitForm(page, `${bigUrl}/credit-notes`, {
    amount: '30.00',
    reason: 'Late delivery',
    reasonCode: 'service_issue',
  });
  t.regex(await pageText(page), /Credit note CN-\d{4}-\d{4} of 30\.00 USD issued\./);
  t.like(await amounts(page), { 'Credited (credit notes)': '30.00 USD', 'Amount due': '50.00 USD' });
  await shoot(page, 'credit-note');

  const customerUrl = `/admin/customers/${c.id}`;
  await page.goto(kit.app.baseUrl + customerUrl);
  await submitForm(page, `${customerUrl}/credits`, { amount: '25.00', description: 'Goodwill' });
  t.regex(await pageText(page), /Granted 25\.00 USD of store credit/);
  await page.goto(kit.app.baseUrl + bigUrl);
  t.like(await amounts(page), { 'Credit applied': '25.00 USD', 'Amount due': '25.00 USD' });
  await shoot(page, 'store-credit');
  await close();
});
