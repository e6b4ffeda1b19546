/**
 * D-94: `/docs` shows what a newcomer needs to build a request. In Chromium, POST /api/billing/invoices
 * expanded shows its request fields, its example body and its error codes; the top of the page says how
 * to authenticate. With SCREENSHOT=1 the expanded operation is saved to docs/screenshots/docs-invoices.png.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startTestApp } from '../helpers/app.ts';
import { newPage, testBrowser } from '../helpers/browser.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('/docs renders POST /api/billing/invoices with its fields, example and errors', async (t) => {
  t.timeout(90_000);
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { browser, close } = await testBrowser();
  t.teardown(close);
  const { page, close: closePage } = await newPage(browser, 1280);
  t.teardown(closePage);

  await page.goto(`${app.baseUrl}/docs`, { waitUntil: 'networkidle0' });
  const intro = await page.$eval('.information-container', (el) => el.textContent ?? '');
  for (const words of [
    'POST /api/auth/login',
    'Authorization: Bearer',
    'Idempotency-Key',
    'startingAfter',
    'decimal string',
  ])
    t.true(intro.includes(words), `the introduction does not mention ${words}`);

  const id = '#operations-Invoices-postApiBillingInvoices';
  await page.waitForSelector(id);
  await page.click(`${id} .opblock-summary`);
  await page.waitForSelector(`${id} .opblock-body .responses-wrapper`);
  const text = await page.$eval(id, (el) => el.textContent ?? '');
  for (const words of [
    'Onboarding workshop',
    'lineItems',
    'customerId',
    'idempotency_key_reused',
    'unauthenticated',
    'invalid_request',
    'INV-2026-000042',
  ]) {
    t.true(text.includes(words), `the expanded operation does not show ${words}`);
  }

  if (process.env.SCREENSHOT) {
    const element = await page.$(id);
    await element!.screenshot({ path: path.join(root, 'docs', 'screenshots', 'docs-invoices.png') });
  }
});
