/**
 * The render job called directly (its handler's `run`), and the browser manager under it: idempotent per content
 * version, skips stale versions, one warm browser with a bounded number of tabs, relaunched after a crash.
 */
import test from 'ava';
import { BrowserManager } from '../../src/invoices/pdf/browser.ts';
import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { renderInvoicePdf } from '../../src/invoices/pdf/render.ts';
import { renderInvoicePdfHandler } from '../../src/invoices/pdf/render-pdf.handler.ts';
import { renderInvoicePdfJob } from '../../src/invoices/pdf/render-pdf.job.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { createCustomer, createInvoice, pdfText } from './helpers.ts';

let app: TestApp;
let cookie: string;
let browser: BrowserManager;

test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  browser = new BrowserManager({ maxPages: 2 });
});
test.after.always(async () => {
  await browser?.close();
  await closeSharedBrowser();
  await app?.close();
});

async function newInvoice(name = 'Render Job Customer') {
  const customer = await createCustomer(app.baseUrl, cookie, { name });
  return createInvoice(app.baseUrl, cookie, {
    customerId: customer.id,
    lineItems: [{ description: 'Render test line', quantity: 2, unitPrice: '21.50' }],
  });
}

const storedVersions = (invoiceId: string) =>
  app.db('invoice_pdfs').where({ invoice_id: invoiceId }).orderBy('content_version').pluck('content_version');

test.serial('run renders and stores once per content version; a repeat is skipped', async (t) => {
  const invoice = await newInvoice('Grace Hopper');
  const ctx = { jobId: 'test', retryCount: 0 };
  const first = await renderInvoicePdfHandler.run(app.deps, { invoiceId: invoice.id, contentVersion: 1 }, ctx);
  t.like(first, { outcome: 'stored' });
  const row = await app.db('invoice_pdfs').where({ invoice_id: invoice.id, content_version: 1 }).first();
  const text = await pdfText(row.pdf);
  t.true(text.includes('Grace Hopper'));
  t.true(text.includes(invoice.invoiceNumber));
  t.true(text.includes('USD 43.00'));

  t.deepEqual(await renderInvoicePdfHandler.run(app.deps, { invoiceId: invoice.id, contentVersion: 1 }, ctx), {
    outcome: 'skipped',
    reason: 'already_stored',
  });
  t.deepEqual(await storedVersions(invoice.id), [1]);
});

test.serial('a version the invoice has moved past, or a missing invoice, is skipped without rendering', async (t) => {
  const invoice = await newInvoice();
  const put = await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, {
    method: 'PUT',
    cookie,
    body: { status: 'void' },
  });
  t.is(put.status, 200);
  t.deepEqual(await renderInvoicePdf(app.deps, browser, { invoiceId: invoice.id, contentVersion: 1 }), {
    outcome: 'skipped',
    reason: 'version_changed',
  });
  t.deepEqual(
    await renderInvoicePdf(app.deps, browser, { invoiceId: '00000000-0000-4000-8000-000000000000', contentVersion: 1 }),
    { outcome: 'skipped', reason: 'invoice_missing' },
  );
  t.deepEqual(await storedVersions(invoice.id), []);
});

test.serial('two renders of one version racing store one PDF', async (t) => {
  const invoice = await newInvoice();
  const outcomes = await Promise.all(
    [1, 2, 3].map(() => renderInvoicePdf(app.deps, browser, { invoiceId: invoice.id, contentVersion: 1 })),
  );
  t.is(outcomes.filter((o) => o.outcome === 'stored').length, 1);
  t.deepEqual(await storedVersions(invoice.id), [1]);
});

test.serial('the payload schema refuses what is not an invoice id and a version', (t) => {
  for (const bad of [
    {},
    { invoiceId: 'x', contentVersion: 1 },
    { invoiceId: '00000000-0000-4000-8000-000000000000', contentVersion: 0 },
    { invoiceId: '00000000-0000-4000-8000-000000000000', contentVersion: '1' },
  ]) {
    t.false(renderInvoicePdfJob.payload.safeParse(bad).success, JSON.stringify(bad));
  }
});

test.serial('one browser serves many renders with at most maxPages tabs open', async (t) => {
  const launchesBefore = browser.launches;
  const chromium = await browser.browser();
  let maxTabs = 0;
  const watch = setInterval(() => {
    void chromium.pages().then((pages) => (maxTabs = Math.max(maxTabs, pages.length)));
  }, 5);
  const pdfs = await Promise.all(
    Array.from({ length: 8 }, (_, i) => browser.render(`<!doctype html><p>Document ${i}</p>`)),
  );
  clearInterval(watch);
  t.is(browser.launches, launchesBefore);
  for (const [i, pdf] of pdfs.entries()) t.true((await pdfText(pdf)).includes(`Document ${i}`));
  // The initial about:blank tab plus at most two of ours.
  t.true(maxTabs <= 3, `saw ${maxTabs} tabs`);
});

test.serial('scripts do not run and nothing is fetched while rendering', async (t) => {
  let requests = 0;
  const http = await import('node:http');
  const server = http.createServer((_req, res) => {
    requests += 1;
    res.end('x');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const pdf = await browser.render(
      `<!doctype html><p id="p">static</p><img src="http://127.0.0.1:${port}/img.png"><link rel="stylesheet" ` +
        `href="http://127.0.0.1:${port}/s.css"><script>document.getElementById('p').textContent = 'scripted'</script>`,
    );
    const text = await pdfText(pdf);
    t.true(text.includes('static'));
    t.false(text.includes('scripted'));
    t.is(requests, 0);
  } finally {
    server.close();
  }
});

test.serial('a crashed browser is relaunched on the next render', async (t) => {
  await browser.render('<p>warm</p>');
  const before = browser.launches;
  const chromium = await browser.browser();
  chromium.process()!.kill('SIGKILL');
  await new Promise((resolve) => chromium.once('disconnected', resolve));
  const pdf = await browser.render('<!doctype html><p>after the crash</p>');
  t.true((await pdfText(pdf)).includes('after the crash'));
  t.is(browser.launches, before + 1);
  // And the relaunched one is kept warm.
  await browser.render('<p>again</p>');
  t.is(browser.launches, before + 1);
});

test.serial('a closed manager refuses to render', async (t) => {
  const manager = new BrowserManager({ maxPages: 1 });
  await manager.render('<p>x</p>');
  await manager.close();
  await t.throwsAsync(manager.render('<p>y</p>'), { message: /closed/ });
});

test.serial('a tab is retired after rendersPerTab renders and a fresh one serves the next', async (t) => {
  const manager = new BrowserManager({ maxPages: 1, rendersPerTab: 3 });
  try {
    const chromium = await manager.browser();
    let tabsOpened = 0;
    chromium.on('targetcreated', (target: { type(): string }) => {
      if (target.type() === 'page') tabsOpened += 1;
    });
    for (let i = 0; i < 7; i++)
      t.true((await pdfText(await manager.render(`<!doctype html><p>Doc ${i}</p>`))).includes(`Doc ${i}`));
    // Renders 1-3, 4-6 and 7 each on their own tab; the worn ones are closed, not kept.
    t.is(tabsOpened, 3);
    // A retired tab closes in the background.
    const pages = await waitFor(
      () => chromium.pages(),
      (open) => open.length <= 2,
      10_000,
    );
    t.true(pages.length <= 2, 'the initial blank tab and at most one of ours');
    t.is(manager.launches, 1);
  } finally {
    await manager.close();
  }
});
