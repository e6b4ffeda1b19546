/**
 * The hosted invoice page in Chromium at 1280 and 360 px (H-1, H-2, K-2): nothing loaded from another host, the
 * console's CSP, the amounts and lines, Pay leading to the provider's checkout as the customer, Paid and Void, and a
 * draft, a replaced and an unknown token all 404.
 */
import test from 'ava';
import type { Browser, HTTPRequest } from 'puppeteer';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { newPage, scrollsSideways, testBrowser } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { startFakeProviders, type FakeProviderA } from '../helpers/fake-providers.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice, pay, type Ctx } from '../payments/fixtures.ts';

let app: TestApp;
let fake: FakeProviderA;
let c: Ctx;
let browser: Browser;
let closeBrowser: () => Promise<void>;
test.before(async () => {
  fake = await startFakeProviders();
  app = await startTestApp({
    PROVIDER_A_API_URL: fake.url,
    PROVIDER_A_SECRET_KEY: fake.secretKey,
    PROVIDER_B_API_URL: fake.url,
    PROVIDER_B_SECRET_KEY: fake.providerBKey,
  });
  c = await adminCtx(app);
  await registerWorkers(app.boss, app.deps, ['pdf'], jobHandlers);
  await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: c.cookie,
    body: { 'company.name': 'Acme Ltd', 'company.email': 'billing@acme.test', 'company.address': '1 Main St' },
  });
  ({ browser, close: closeBrowser } = await testBrowser());
});
test.after.always(async () => {
  await closeBrowser?.();
  await closeSharedBrowser();
  await app?.close();
  await fake?.close();
});

/** The path of a hostedUrl, on the test app (PUBLIC_BASE_URL is the default, localhost:<PORT>). */
const pathOf = (hostedUrl: string) => new URL(hostedUrl).pathname;

async function openHosted(path: string, width: number) {
  const opened = await newPage(browser, width);
  const requests: string[] = [];
  opened.page.on('request', (r: HTTPRequest) => requests.push(r.url()));
  const response = await opened.page.goto(`${app.baseUrl}${path}`);
  return { ...opened, response: response!, requests };
}

for (const width of [1280, 360]) {
  test(`at ${width} px: seller, number, lines and amounts, Pay buttons, PDF; only this host; the CSP`, async (t) => {
    const customer = await insertCustomer(app.db, { name: 'Dana Buyer' });
    const invoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '250.00' });
    t.regex(invoice.hostedUrl, /^http:\/\/localhost:\d+\/i\/[A-Za-z0-9_-]{43}$/);
    const { page, response, requests, close } = await openHosted(pathOf(invoice.hostedUrl), width);
    t.teardown(close);
    t.is(response.status(), 200);
    const csp = response.headers()['content-security-policy']!;
    t.regex(csp, /frame-ancestors 'none'/);
    t.notRegex(csp, /unsafe-/);
    t.is(response.headers()['x-frame-options'], 'DENY');
    const text = await page.$eval('body', (b) => b.textContent ?? '');
    t.is(await page.$eval('.status', (e) => e.textContent), 'Issued', "the API's status word");
    const expectations = ['Acme Ltd', `Invoice ${invoice.invoiceNumber}`, 'Dana Buyer', '250.00 USD due', 'Subtotal'];
    for (const expected of expectations) t.true(text.includes(expected), expected);
    t.deepEqual(await page.$$eval('form button', (bs) => bs.map((b) => b.textContent)), [
      'Pay with Provider A',
      'Pay with Provider B',
    ]);
    t.is(await page.$eval('a.button', (a) => a.getAttribute('href')), `${pathOf(invoice.hostedUrl)}/pdf`);
    t.true(requests.length >= 2, 'the page and its stylesheet');
    t.true(
      requests.every((url) => new URL(url).origin === app.baseUrl),
      requests.join(' '),
    );
    t.false(await scrollsSideways(page));
    await page.screenshot({ path: `docs/screenshots/hosted-invoice-${width}.png`, fullPage: true });
  });
}

test('Download PDF is the same PDF as the admin reads', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '12.00' });
  for (const path of [pathOf(invoice.hostedUrl), `${pathOf(invoice.hostedUrl)}/pdf`]) {
    const head = await fetch(`${app.baseUrl}${path}`, { method: 'HEAD' });
    t.is(head.status, 200, `HEAD ${path} answers as GET`);
  }
  const hosted = await fetch(`${app.baseUrl}${pathOf(invoice.hostedUrl)}/pdf`);
  t.is(hosted.status, 200);
  t.is(hosted.headers.get('content-type'), 'application/pdf');
  const admin = await fetch(`${app.baseUrl}/api/billing/invoices/${invoice.id}/pdf`, { headers: { cookie: c.cookie } });
  t.deepEqual(Buffer.from(await hosted.arrayBuffer()), Buffer.from(await admin.arrayBuffer()));
});

test("Pay starts the provider's checkout as the customer and redirects there (303)", async (t) => {
  const customer = await insertCustomer(app.db);
  const invoice = await makeInvoice(c, { customerId: customer.id, unitPrice: '49.99' });
  const { page, close } = await openHosted(pathOf(invoice.hostedUrl), 360);
  t.teardown(close);
  await page.setRequestInterception(true);
  const checkout = new Promise<string>((resolve) => {
    page.on('request', (r) => {
      if (r.url().startsWith('https://checkout.provider-a.example/')) {
        resolve(r.url());
        void r.respond({ status: 200, contentType: 'text/html', body: '<p>provider checkout</p>' });
      } else void r.continue();
    });
  });
  await page.click('form button');
  t.regex(await checkout, /^https:\/\/checkout\.provider-a\.example\/pay\/cs_fake_\d+$/);
  const sent = await fake.received(invoice.id);
  t.is(sent.path, '/v1/checkout/sessions');
  const audit = await app.db('audit_log').where({ action: 'checkout.create', target_id: invoice.id }).first();
  t.is(audit.actor, `customer:${customer.id}`);
  t.regex(audit.request_id ?? '', /^[0-9a-f-]{36}$/, "K-2: the same row as the admin's, its request id too");
});

test('at 360 px a line without spaces (a SKU) and a long amount break instead of widening the page', async (t) => {
  const res = await request(app.baseUrl, '/api/billing/invoices', {
    cookie: c.cookie,
    body: {
      customerId: (await insertCustomer(app.db)).id,
      status: 'issued',
      currency: 'EUR',
      lineItems: [
        {
          description: 'ENTERPRISE_ANNUAL_MAINTENANCE_SUPPORT_CONTRACT_SKU_0000012345678',
          quantity: 12,
          unitPrice: '102880000000.00',
        },
      ],
    },
  });
  t.is(res.status, 201, res.text);
  const { page, close } = await openHosted(pathOf(res.body.hostedUrl), 360);
  t.teardown(close);
  t.false(await scrollsSideways(page));
});

test('a paid invoice shows Paid with its date and no Pay; a void one Void', async (t) => {
  const paidInvoice = await makeInvoice(c, { unitPrice: '30.00' });
  t.is((await pay(c, { invoiceId: paidInvoice.id, amount: '30.00' })).status, 201);
  const paid = await request(app.baseUrl, pathOf(paidInvoice.hostedUrl));
  t.is(paid.status, 200);
  t.regex(paid.text, new RegExp(`Paid ${new Date().toISOString().slice(0, 10)}`));
  t.false(paid.text.includes('Pay with'));

  const voided = await makeInvoice(c, { unitPrice: '30.00' });
  const res = await request(app.baseUrl, `/api/billing/invoices/${voided.id}`, {
    method: 'PUT',
    cookie: c.cookie,
    body: { status: 'void' },
  });
  t.is(res.status, 200, res.text);
  const page = await request(app.baseUrl, pathOf(voided.hostedUrl));
  t.regex(page.text, />Void</);
  t.false(page.text.includes('Pay with'));
  // Pay on a void invoice is refused on the page, and starts nothing.
  const post = await fetch(`${app.baseUrl}${pathOf(voided.hostedUrl)}/pay/provider_a`, {
    method: 'POST',
    redirect: 'manual',
  });
  t.is(post.status, 409);
  t.true((await post.text()).includes('nothing left to pay'));
});

test('a draft has no link; a replaced token, an unknown one and a malformed one are 404', async (t) => {
  const draft = await makeInvoice(c, { status: 'draft' });
  t.is(draft.hostedUrl, null);
  t.is((await app.db('hosted_invoice_links').where({ invoice_id: draft.id })).length, 0);
  const draftReplace = await request(app.baseUrl, `/api/billing/invoices/${draft.id}/hosted-url`, {
    method: 'POST',
    cookie: c.cookie,
  });
  t.is(draftReplace.status, 409);

  const invoice = await makeInvoice(c);
  const before = invoice.hostedUrl as string;
  t.is(
    (await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, { cookie: c.cookie })).body.hostedUrl,
    before,
  );
  const replaced = await request(app.baseUrl, `/api/billing/invoices/${invoice.id}/hosted-url`, {
    method: 'POST',
    cookie: c.cookie,
  });
  t.is(replaced.status, 200, replaced.text);
  t.not(replaced.body.hostedUrl, before);
  t.is((await request(app.baseUrl, pathOf(before))).status, 404);
  t.is((await request(app.baseUrl, pathOf(replaced.body.hostedUrl))).status, 200);
  t.is(
    (await request(app.baseUrl, `/api/billing/invoices/${invoice.id}`, { cookie: c.cookie })).body.hostedUrl,
    replaced.body.hostedUrl,
  );
  const audit = await app.db('audit_log').where({ action: 'invoice.replace_hosted_link', target_id: invoice.id });
  t.is(audit.length, 1);
  // Stored hashed: the token never appears as it is in its row.
  const row = await app.db('hosted_invoice_links').where({ invoice_id: invoice.id }).first();
  const token = pathOf(replaced.body.hostedUrl).slice(3);
  t.not(row.token_hash, token);
  t.is((await request(app.baseUrl, '/i/not-a-token')).status, 404);
  t.is((await request(app.baseUrl, `/i/${'A'.repeat(43)}`)).status, 404);
});
