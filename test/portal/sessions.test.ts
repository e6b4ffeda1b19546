/**
 * P-1 portal sessions and their security: the admin and v1 routes, a link that works once and for an hour, the
 * `portal_session` cookie (HttpOnly, SameSite=Lax, 12 hours, stored hashed), the used/expired/unknown page, logout,
 * CSRF on POSTs, and an admin session that is no portal session and the reverse.
 */
import test from 'ava';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { purgeExpired } from '../../src/housekeeping/service.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { createApiKey } from '../invoices-pdf/helpers.ts';
import { newPage } from '../helpers/browser.ts';
import {
  bodyText,
  fitsWidth,
  portalCookie,
  portalCsrf,
  portalLink,
  postForm,
  startPortalWorld,
  type PortalWorld,
} from './fixtures.ts';

let w: PortalWorld;
test.before(async () => {
  w = await startPortalWorld();
});
test.after.always(async () => w?.close());

test('the admin route answers 201 { url, expiresAt }: an hour, under PUBLIC_BASE_URL, audited', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const before = Date.now();
  const link = await portalLink(w, customer.id, 'https://app.example.com/account');
  t.regex(link.url, /^http:\/\/localhost:\d+\/portal\/s\/[A-Za-z0-9_-]{43}$/);
  const ttl = Date.parse(link.expiresAt) - before;
  t.true(ttl > 59 * 60_000 && ttl <= 60 * 60_000 + 5_000, String(ttl));
  const token = link.path.split('/').at(-1)!;
  const row = await w.app.db('portal_links').where({ customer_id: customer.id }).first();
  t.is(row.token_hash, sha256Hex(token), 'only the hash is stored');
  t.false(JSON.stringify(row).includes(token));
  const audit = await w.app.db('audit_log').where({ action: 'customer.portal_session_create', target_id: customer.id });
  t.is(audit.length, 1);
});

test('the admin route refuses an unknown customer and a bad returnUrl, writing nothing', async (t) => {
  const unknown = await request(w.app.baseUrl, '/api/billing/portal-sessions', {
    cookie: w.c.cookie,
    body: { customerId: '00000000-0000-4000-8000-000000000000' },
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'customer_not_found');
  const customer = await insertCustomer(w.app.db);
  const bad = await request(w.app.baseUrl, '/api/billing/portal-sessions', {
    cookie: w.c.cookie,
    body: { customerId: customer.id, returnUrl: 'javascript:alert(1)' },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.details[0].path, 'returnUrl');
  t.is((await w.app.db('portal_links').where({ customer_id: customer.id })).length, 0);
  const anonymous = await request(w.app.baseUrl, '/api/billing/portal-sessions', { body: { customerId: customer.id } });
  t.is(anonymous.status, 401);
});

test("the v1 route makes a link for the API key's customer", async (t) => {
  const customer = await insertCustomer(w.app.db, { name: 'Keyed Customer' });
  const key = await createApiKey(w.app.baseUrl, w.c.cookie, customer.id);
  const res = await request(w.app.baseUrl, '/api/v1/portal-sessions', {
    bearer: key,
    body: { returnUrl: 'https://app.example.com/billing' },
  });
  t.is(res.status, 201);
  const opened = await fetch(`${w.app.baseUrl}${new URL(res.body.url).pathname}`, { redirect: 'manual' });
  t.is(opened.status, 303);
  const cookie = /portal_session=[^;]+/.exec(opened.headers.get('set-cookie')!)![0];
  const page = await request(w.app.baseUrl, '/portal', { cookie });
  t.true(page.text.includes('Keyed Customer'));
  t.true(page.text.includes('Back to app.example.com'));
  const foreign = await request(w.app.baseUrl, '/api/v1/portal-sessions', {
    bearer: key,
    body: { customerId: '00000000-0000-4000-8000-000000000000' },
  });
  t.is(foreign.status, 400, 'a customerId is not a v1 field');
});

test('a link: 303 to /portal, portal_session HttpOnly, SameSite=Lax, 12 hours, stored hashed', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const link = await portalLink(w, customer.id);
  const scanned = await fetch(`${w.app.baseUrl}${link.path}`, { method: 'HEAD', redirect: 'manual' });
  t.is(scanned.status, 200);
  t.is(scanned.headers.get('set-cookie'), null, "a HEAD (a mail scanner's) neither signs in nor uses the link");
  const res = await fetch(`${w.app.baseUrl}${link.path}`, { redirect: 'manual' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/portal');
  const setCookie = res.headers.get('set-cookie')!;
  t.regex(setCookie, /^portal_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+; Expires=/);
  t.true(Math.abs(Number(/Max-Age=(\d+)/.exec(setCookie)![1]) - 12 * 3_600) < 60, 'Max-Age: 12 hours');
  const expires = Date.parse(/Expires=([^;]+)/.exec(setCookie)![1]!);
  t.true(Math.abs(expires - (Date.now() + 12 * 3_600_000)) < 60_000);
  const token = /portal_session=([^;]+)/.exec(setCookie)![1]!;
  const session = await w.app.db('portal_sessions').where({ customer_id: customer.id }).first();
  t.is(session.token_hash, sha256Hex(token));
});

for (const width of [1280, 360]) {
  test(`at ${width} px: a link works once; used, expired, unknown links: a page leading to sign-in`, async (t) => {
    const customer = await insertCustomer(w.app.db, { name: 'Once Only' });
    const link = await portalLink(w, customer.id);
    const first = await newPage(w.browser, width);
    t.teardown(first.close);
    await first.page.goto(`${w.app.baseUrl}${link.path}`);
    t.is(new URL(first.page.url()).pathname, '/portal');
    t.true((await bodyText(first.page)).includes('Once Only'));

    const second = await newPage(w.browser, width);
    t.teardown(second.close);
    const used = await second.page.goto(`${w.app.baseUrl}${link.path}`);
    t.is(used!.status(), 404);
    t.true((await bodyText(second.page)).includes('This link no longer works'));
    t.is(await second.page.$eval('main a', (a) => a.getAttribute('href')), '/portal/login');
    t.true(await fitsWidth(second.page));
    if (width === 360)
      await second.page.screenshot({ path: 'docs/screenshots/portal-link-used-360.png', fullPage: true });
    else await second.page.screenshot({ path: 'docs/screenshots/portal-link-used-1280.png', fullPage: true });

    const expired = await portalLink(w, customer.id);
    await w.app
      .db('portal_links')
      .where({ token_hash: sha256Hex(expired.path.split('/').at(-1)!) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    t.is((await second.page.goto(`${w.app.baseUrl}${expired.path}`))!.status(), 404, 'an hour later');
    const unknown = await second.page.goto(`${w.app.baseUrl}/portal/s/${'A'.repeat(43)}`);
    t.is(unknown!.status(), 404);
    t.is(new URL(second.page.url()).pathname, `/portal/s/${'A'.repeat(43)}`);
    const nothing = await second.page.goto(`${w.app.baseUrl}/portal`);
    t.is(new URL(second.page.url()).pathname, '/portal/login', 'no session was made');
    t.is(nothing!.status(), 200);
  });
}

test('an admin session gives no portal access; a portal session no admin access', async (t) => {
  const portal = await request(w.app.baseUrl, '/portal', { cookie: w.c.cookie, redirect: 'manual' });
  t.is(portal.status, 302);
  t.is(portal.headers.get('location'), '/portal/login');
  const customer = await insertCustomer(w.app.db);
  const cookie = await portalCookie(w, customer.id);
  t.is((await request(w.app.baseUrl, '/api/customers', { cookie })).status, 401);
  const admin = await request(w.app.baseUrl, '/admin', { cookie, redirect: 'manual' });
  t.is(admin.status, 302);
  t.regex(admin.headers.get('location')!, /^\/admin\/login/);
  // The token itself as an admin session cookie is nothing either.
  const token = cookie.split('=')[1];
  t.is((await request(w.app.baseUrl, '/api/customers', { cookie: `session=${token}` })).status, 401);
});

test('a POST without the CSRF token changes nothing (403); logout with it ends the session', async (t) => {
  const customer = await insertCustomer(w.app.db, { name: 'Csrf Case' });
  const cookie = await portalCookie(w, customer.id);
  const csrf = await portalCsrf(w, cookie);
  const forged = await postForm(w, '/portal/billing', cookie, { name: 'Forged' });
  t.is(forged.status, 403);
  const wrong = await postForm(w, '/portal/billing', cookie, { name: 'Forged', _csrf: 'x'.repeat(43) });
  t.is(wrong.status, 403);
  const noLogout = await postForm(w, '/portal/logout', cookie, {});
  t.is(noLogout.status, 403);
  t.is((await w.app.db('customers').where({ id: customer.id }).first()).name, 'Csrf Case');
  t.is((await request(w.app.baseUrl, '/portal', { cookie })).status, 200, 'still signed in');

  const out = await postForm(w, '/portal/logout', cookie, { _csrf: csrf });
  t.is(out.status, 303);
  t.is(out.headers.get('location'), '/portal/login');
  const cleared = /portal_session=; HttpOnly; SameSite=Lax; Path=\/; Max-Age=0; Expires=Thu, 01 Jan 1970/;
  t.regex(out.headers.get('set-cookie')!, cleared);
  const after = await request(w.app.baseUrl, '/portal', { cookie, redirect: 'manual' });
  t.is(after.status, 302, 'the session is gone server-side');
  t.is((await w.app.db('portal_sessions').where({ customer_id: customer.id })).length, 0);
});

test("the portal's pages carry the console's security headers", async (t) => {
  const res = await request(w.app.baseUrl, '/portal/login');
  const csp = res.headers.get('content-security-policy')!;
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe-/);
  t.is(res.headers.get('x-frame-options'), 'DENY');
});

test('housekeeping deletes ended links and sessions, and keeps live ones', async (t) => {
  const customer = await insertCustomer(w.app.db);
  const ended = await portalLink(w, customer.id);
  const live = await portalLink(w, customer.id);
  const hashOf = (path: string) => sha256Hex(path.split('/').at(-1)!);
  await w.app
    .db('portal_links')
    .where({ token_hash: hashOf(ended.path) })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const counts = await purgeExpired(w.app.db, new Date());
  t.true(counts.portalRows >= 1);
  t.is((await w.app.db('portal_links').where({ token_hash: hashOf(ended.path) })).length, 0);
  t.is((await w.app.db('portal_links').where({ token_hash: hashOf(live.path) })).length, 1);
});
