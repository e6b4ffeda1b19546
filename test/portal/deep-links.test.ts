/**
 * Deep links into the portal (issue 37: users of portals ask for them): a P-1 link made for a page opens that page,
 * and a signed-out browser that opened a page (a link in an email) is taken back to it once it signs in with a code.
 * Only pages of the portal are accepted: nothing leads elsewhere.
 */
import test from 'ava';
import { newPage } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import { createApiKey } from '../invoices-pdf/helpers.ts';
import {
  bodyText,
  emailedCode,
  makePortalCustomer,
  signInClient,
  startPortalWorld,
  type PortalWorld,
} from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

const open = (url: string, cookie?: string) =>
  fetch(`${w.app.baseUrl}${new URL(url, w.app.baseUrl).pathname}`, {
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
  });

test('a link made for a page opens that page; the admin and v1 routes take the same path', async (t) => {
  const world = await makePortalCustomer(w, 'Deep Link Customer');
  const page = `/portal/subscriptions/${world.sub.id}`;
  const admin = await request(w.app.baseUrl, '/api/billing/portal-sessions', {
    cookie: w.c.cookie,
    body: { customerId: world.customer.id, path: page },
  });
  t.is(admin.status, 201);
  const opened = await open(admin.body.url);
  t.is(opened.status, 303);
  t.is(opened.headers.get('location'), page);
  const cookie = /portal_session=[^;]+/.exec(opened.headers.get('set-cookie')!)![0];
  const shown = await request(w.app.baseUrl, page, { cookie });
  t.is(shown.status, 200);
  t.true(shown.text.includes('Cancel at period end'));

  const key = await createApiKey(w.app.baseUrl, w.c.cookie, world.customer.id);
  const v1 = await request(w.app.baseUrl, '/api/v1/portal-sessions', {
    bearer: key,
    body: { path: '/portal/invoices' },
  });
  t.is(v1.status, 201);
  t.is((await open(v1.body.url)).headers.get('location'), '/portal/invoices');
  const plain = await request(w.app.baseUrl, '/api/v1/portal-sessions', { bearer: key, body: {} });
  t.is((await open(plain.body.url)).headers.get('location'), '/portal', 'no path: the overview (P-1)');
});

test('a path that is not a page of the portal is refused, writing nothing', async (t) => {
  const world = await makePortalCustomer(w, 'Refused Path Customer');
  for (const path of [
    'https://evil.example/portal',
    '//evil.example/portal',
    '/admin',
    '/portal/../admin',
    '/portal/invoices?x=1',
    'portal/invoices',
  ]) {
    const res = await request(w.app.baseUrl, '/api/billing/portal-sessions', {
      cookie: w.c.cookie,
      body: { customerId: world.customer.id, path },
    });
    t.is(res.status, 400, path);
    t.deepEqual(
      res.body.error.details.map((d: { path: string }) => d.path),
      ['path'],
      path,
    );
  }
  t.is((await w.app.db('portal_links').where({ customer_id: world.customer.id })).length, 0);
});

for (const width of [1280, 360]) {
  test(`at ${width} px: signed out, a page's link leads to sign-in, and the code opens that page`, async (t) => {
    const world = await makePortalCustomer(w, `Emailed Link ${width}`);
    const { page, close } = await newPage(w.browser, width);
    t.teardown(close);
    const wanted = `/portal/licenses/${world.license.id}`;
    await page.goto(`${w.app.baseUrl}${wanted}`);
    t.is(new URL(page.url()).pathname, '/portal/login');
    t.true(
      (await page.cookies()).some((c) => c.name === 'portal_wanted' && c.httpOnly),
      'remembered',
    );
    await page.type('input[name=email]', world.customer.email);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
    await page.type('input[name=code]', await emailedCode(w, world.customer.id));
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
    t.is(new URL(page.url()).pathname, wanted);
    t.true((await bodyText(page)).includes(world.license.licenseKey));
    const names = (await page.cookies()).map((c) => c.name);
    t.true(names.includes('portal_session'));
    t.false(names.includes('portal_wanted'), 'the wanted page is used once');
  });
}

test('a planted wanted page that is not a portal page is ignored: the code opens the overview', async (t) => {
  const world = await makePortalCustomer(w, 'Planted Cookie');
  const { post } = await signInClient(w, 'portal_wanted=https://evil.example/');
  await post('/portal/login', { email: world.customer.email });
  const res = await post('/portal/login/code', {
    email: world.customer.email,
    code: await emailedCode(w, world.customer.id),
  });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/portal');
});
