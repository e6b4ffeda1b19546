/**
 * The portal's world: the app with its emails worker (sign-in codes are `captured` without SMTP_URL), an admin, and
 * customers with invoices, subscriptions (two plans of one product to change between) and a license with devices.
 */
import type { Browser, Page } from 'puppeteer';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createPlan } from '../../src/plans/service.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { newPage, testBrowser } from '../helpers/browser.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { adminCtx, makeInvoice, type Ctx } from '../payments/fixtures.ts';

export interface PortalWorld {
  app: TestApp;
  c: Ctx;
  browser: Browser;
  close(): Promise<void>;
}

export async function startPortalWorld(env: Record<string, string> = {}): Promise<PortalWorld> {
  const app = await startTestApp(env);
  const stopWorkers = await registerWorkers(app.boss, app.deps, ['emails'], jobHandlers);
  const c = await adminCtx(app);
  await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: c.cookie,
    body: { 'company.name': 'Acme Software', 'company.email': 'billing@acme.test' },
  });
  const { browser, close } = await testBrowser();
  return {
    app,
    c,
    browser,
    async close() {
      await close();
      await stopWorkers();
      await app.close();
    },
  };
}

let n = 0;

/** A customer with two invoices, a monthly subscription on plan Basic (Pro and Team offered) and a license. */
export async function makePortalCustomer(w: PortalWorld, name = 'Dana Buyer') {
  n += 1;
  const customer = await insertCustomer(w.app.db, { name, email: `dana-${n}-${Date.now()}@buyer.test` });
  const [product] = await w.app
    .db('products')
    .insert({ name: `Studio ${n}`, product_type: 'licensed', price: '30.00' })
    .returning('id');
  const plan = (name: string, basePrice: string) =>
    createPlan(
      w.app.db,
      { productId: product.id, name, pricingModel: 'flat', billingCycle: 'monthly', basePrice, currency: 'USD' },
      SYSTEM_ACTOR,
    );
  const basic = await plan('Basic', '30.00');
  const pro = await plan('Pro', '60.00');
  const sub = await createSubscription(
    w.app.db,
    { customerId: customer.id, planId: basic.id, billingCycle: 'monthly' },
    SYSTEM_ACTOR,
  );
  const invoice = await makeInvoice(w.c, { customerId: customer.id, unitPrice: '125.00' });
  const license = await request(w.app.baseUrl, '/api/licenses', {
    cookie: w.c.cookie,
    body: { customerId: customer.id, productId: product.id, maxActivations: 3, features: { export: true } },
  });
  if (license.status !== 201) throw new Error(`license: ${license.status} ${license.text}`);
  for (const device of ['laptop-1', 'desk-2']) {
    const res = await request(w.app.baseUrl, '/api/licenses/validate', {
      body: { licenseKey: license.body.licenseKey, deviceId: device, deviceName: `Device ${device}` },
    });
    if (!res.body.valid) throw new Error(`validate: ${res.text}`);
  }
  return { customer, basic, pro, sub, invoice, license: license.body as { id: string; licenseKey: string } };
}

/** A portal link from the admin API (P-1). */
export async function portalLink(w: PortalWorld, customerId: string, returnUrl?: string) {
  const res = await request(w.app.baseUrl, '/api/billing/portal-sessions', {
    cookie: w.c.cookie,
    body: { customerId, ...(returnUrl ? { returnUrl } : {}) },
  });
  if (res.status !== 201) throw new Error(`portal session: ${res.status} ${res.text}`);
  return { ...(res.body as { url: string; expiresAt: string }), path: new URL(res.body.url).pathname };
}

/** A browser page signed in to the portal through a fresh link, at `width`. */
export async function portalPage(w: PortalWorld, customerId: string, width: number, returnUrl?: string) {
  const opened = await newPage(w.browser, width);
  const link = await portalLink(w, customerId, returnUrl);
  await opened.page.goto(`${w.app.baseUrl}${link.path}`);
  return opened;
}

/** The portal cookie of a signed-in HTTP client (for requests outside the browser). */
export async function portalCookie(w: PortalWorld, customerId: string): Promise<string> {
  const link = await portalLink(w, customerId);
  const res = await fetch(`${w.app.baseUrl}${link.path}`, { redirect: 'manual' });
  const match = /portal_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '');
  if (!match) throw new Error('no portal_session cookie');
  return `portal_session=${match[1]}`;
}

/** The session's form token, read from a page as a browser would. */
export async function portalCsrf(w: PortalWorld, cookie: string): Promise<string> {
  const page = await request(w.app.baseUrl, '/portal', { cookie });
  const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (!token) throw new Error(`no _csrf on /portal (${page.status})`);
  return token;
}

/** A form POST to the portal, not following the redirect. */
export function postForm(w: PortalWorld, path: string, cookie: string, fields: Record<string, string>) {
  return fetch(`${w.app.baseUrl}${path}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

/** The code of the latest sign-in email to `customerId`, once the job and the emails worker have written it. */
export async function emailedCode(w: PortalWorld, customerId: string, after = 0): Promise<string> {
  const rows = await waitFor(
    () => w.app.db('emails').where({ type: 'portal.code', customer_id: customerId }).orderBy('created_at', 'desc'),
    (found) => found.length > after && Boolean(found[0]?.text_body),
  );
  const code = /\b(\d{6})\b/.exec(rows[0]?.text_body ?? '')?.[1];
  if (!code) throw new Error(`no code in ${rows[0]?.text_body}`);
  return code;
}

export const bodyText = (page: Page) => page.$eval('body', (b) => b.textContent ?? '');

/** No horizontal scroll (P-numbers at 360 px): the document is no wider than the viewport. */
export const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

/**
 * A client holding the sign-in forms' cookie and token, as a browser that opened /portal/login; `cookies` are sent
 * beside them (a cookie another page planted).
 */
export async function signInClient(w: PortalWorld, cookies = '') {
  const res = await fetch(`${w.app.baseUrl}/portal/login`);
  const cookie = /console_csrf=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await res.text())![1]!;
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${w.app.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        cookie: cookies ? `${cookie}; ${cookies}` : cookie,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      redirect: 'manual',
    });
  return { csrf, post };
}
