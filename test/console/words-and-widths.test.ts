/**
 * Issue 34's smaller defects, as the walk-through found them, in Chromium: `bank_tra/nsfer` broken mid-word at
 * 1280 px, amount columns scrolled off at 360 px, raw values (`true/false`, `requested_by_customer`) and decision
 * numbers ("(D-12)") shown to users, refusals in developer words ("Invalid body", a bare `invalid_request`).
 */
import test from 'ava';
import type { Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createRefund } from '../../src/refunds/service.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { startConsoleKit, texts, type ConsoleKit } from './fixtures.ts';
import { customer, invoiceFor, pageText, payManually, submitForm } from './invoices-fixtures.ts';

let kit: ConsoleKit;
let c: { id: string };
let invoiceId: string;
test.before(async () => {
  kit = await startConsoleKit();
  c = await customer(kit.app.db, 'Widths & Words Trading Company International');
  const invoice = await invoiceFor(kit.app.db, c.id, { unitPrice: '1234567.89' });
  invoiceId = invoice.id;
  const payment = await payManually(kit.app.db, invoice.id, '1200000.00', {
    method: 'bank_transfer',
    reference: 'WIRE-2026-11-0042',
  });
  await createRefund(
    kit.app.db,
    { paymentId: payment.id, amount: '25.00', reason: 'Seat removed', reasonCode: 'requested_by_customer' },
    SYSTEM_ACTOR,
    { config: kit.app.deps.config },
  );
});
test.after.always(async () => kit?.close());

/** Words of the tables' cells that the browser split across two lines (each word's text range has one box). */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    for (const cell of Array.from(document.querySelectorAll('main td'))) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (const match of Array.from(text.matchAll(/\S+/g))) {
          // Ids are long on purpose and may break; words and references must not.
          if (match[0].length > 30) continue;
          const range = document.createRange();
          range.setStart(node, match.index!);
          range.setEnd(node, match.index! + match[0].length);
          const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(match[0]);
        }
      }
    }
    return broken;
  });
}

test('at 1280 px no word of the money lists breaks mid-word, and the method reads "Bank transfer"', async (t) => {
  const { page, close } = await kit.adminPage(`/admin/payments?customerId=${c.id}`);
  t.deepEqual(await brokenWords(page), []);
  const text = await pageText(page);
  t.regex(text, /Bank transfer/);
  t.notRegex(text, /bank_transfer|partially_refunded/);
  t.regex(text, /partially refunded/);
  for (const path of [`/admin/invoices?customerId=${c.id}`, `/admin/invoices/${invoiceId}`, '/admin/customers']) {
    await page.goto(kit.app.baseUrl + path);
    t.deepEqual(await brokenWords(page), [], path);
  }
  await close();
});

test('at 360 px the amounts of every money list are on the screen; the page does not scroll sideways', async (t) => {
  const { page, close } = await kit.adminPage(`/admin/invoices?customerId=${c.id}`, 360);
  for (const path of [
    `/admin/invoices?customerId=${c.id}`,
    `/admin/payments?customerId=${c.id}`,
    '/admin/customers?q=widths',
    `/admin/invoices/${invoiceId}`,
  ]) {
    await page.goto(kit.app.baseUrl + path);
    const amounts = await page.$$eval('main td.num', (cells) =>
      cells.map((td) => {
        const box = td.getBoundingClientRect();
        return { text: (td.textContent ?? '').trim(), left: box.left, right: box.right };
      }),
    );
    t.true(amounts.length > 0, path);
    const off = amounts.filter((a) => a.text !== '' && (a.left < 0 || a.right > 360));
    t.deepEqual(off, [], `${path}: amounts outside the screen`);
    t.false(await scrollsSideways(page), path);
  }
  // The sortable headers stay as links above the stacked rows.
  await page.goto(`${kit.app.baseUrl}/admin/invoices?customerId=${c.id}`);
  t.true(await page.$eval('th a.sort[href*="sort=total"]', (a) => (a as HTMLElement).offsetWidth > 0));
  await close();
});

test('raw values read as words: reason codes, yes and no; no decision numbers on the pages', async (t) => {
  const { page, close } = await kit.adminPage(`/admin/invoices/${invoiceId}`);
  const text = await pageText(page);
  t.regex(text, /Requested by customer: Seat removed/);
  t.notRegex(text, /requested_by_customer|bank_transfer|partially_refunded/);
  await page.goto(`${kit.app.baseUrl}/admin/customers/${c.id}`);
  t.regex(await pageText(page), /Bank transfer/);
  t.notRegex(await pageText(page), /bank_transfer|partially_refunded/, 'the customer page too');
  // Every select of the console names its options in words (the change-plan form's prorate read true/false).
  for (const path of ['/admin/settings', `/admin/invoices/${invoiceId}`, '/admin/subscriptions', '/admin/licenses']) {
    await page.goto(kit.app.baseUrl + path);
    const body = await pageText(page);
    t.notRegex(body, /\(D-\d+\)/, `${path}: a decision number`);
    const options = await texts(page, 'main select option');
    t.deepEqual(
      options.filter((o) => /^(true|false)$|_/.test(o)),
      [],
      `${path}: raw option words`,
    );
  }
  await close();
});

test('a refusal speaks the user\'s words: fields named in words, the code set apart, no "Invalid body"', async (t) => {
  const url = `/admin/invoices/${invoiceId}`;
  const { page, close } = await kit.adminPage(url);
  await submitForm(page, `${url}/payments`, { amount: '20.00', receivedAt: '2099-01-01' });
  t.deepEqual(await texts(page, '.error-summary li'), ['Received at: must not be in the future']);
  t.deepEqual(await texts(page, '.error-summary .error-code'), ['(error code invalid_request)']);
  t.notRegex(await pageText(page), /Invalid body|Invalid input/);
  await page.goto(`${kit.app.baseUrl}/admin/coupons`);
  await submitForm(page, '/admin/coupons', { code: 'PAST', percentOff: '10', expiresAt: '2001-01-01' });
  t.regex(await pageText(page), /Expires at: must be in the future/);
  t.notRegex(await pageText(page), /Invalid body/);
  await close();
});
