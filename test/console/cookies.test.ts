/**
 * Issue 33: the cookies of sign-in and of the console by the scheme the browser sees. Over HTTPS (here: behind a
 * trusted proxy that says `X-Forwarded-Proto: https`) they are `Secure`, and the console's own are named
 * `__Host-...` with `Path=/` (a name that a sibling subdomain or a plain-HTTP page cannot set); over plain HTTP they
 * keep their bare names and carry no `Secure`, which a browser would refuse there.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request, sessionCookie } from '../helpers/http.ts';
import { createUser } from './fixtures.ts';

let app: TestApp;
let admin: { email: string; password: string };
test.before(async () => {
  app = await startTestApp({ TRUST_PROXY: 'true' });
  admin = await createUser(app, 'admin');
});
test.after.always(async () => app?.close());

const HTTPS = { 'x-forwarded-proto': 'https' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Each Set-Cookie of an answer as its name=value pair and its attributes in lower case. */
function cookiesOf(res: { headers: Headers }): { pair: string; name: string; attributes: string[] }[] {
  return res.headers.getSetCookie().map((line) => {
    const [pair, ...attributes] = line.split(';').map((p) => p.trim());
    return { pair: pair!, name: pair!.split('=')[0]!, attributes: attributes.map((a) => a.toLowerCase()) };
  });
}

function only(res: { headers: Headers }, name: string) {
  const found = cookiesOf(res).filter((c) => c.name === name);
  if (found.length !== 1) throw new Error(`expected one ${name} cookie, got ${res.headers.getSetCookie().join(' | ')}`);
  return found[0]!;
}

const tokenOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;

/** Signs in through the console's form over the given scheme; answers the session cookie pair. */
async function consoleSignIn(headers: Record<string, string>) {
  const form = await request(app.baseUrl, '/admin/login', { headers });
  const csrf = cookiesOf(form).find((c) => c.name.endsWith('console_csrf'))!;
  const res = await request(app.baseUrl, '/admin/login', {
    method: 'POST',
    cookie: csrf.pair,
    headers: { ...headers, ...FORM },
    rawBody: new URLSearchParams({ _csrf: tokenOf(form.text), ...admin, next: '/admin' }).toString(),
    redirect: 'manual',
  });
  return { form, res };
}

test('over HTTPS: the sign-in token cookie is __Host- and Secure, and the session cookie is Secure', async (t) => {
  const { form, res } = await consoleSignIn(HTTPS);
  const csrf = only(form, '__Host-console_csrf');
  t.true(csrf.attributes.includes('secure'));
  t.true(csrf.attributes.includes('path=/'));
  t.true(csrf.attributes.includes('httponly'));
  t.false(csrf.attributes.some((a) => a.startsWith('domain=')));
  t.is(res.status, 303, res.text.slice(0, 200));
  const session = only(res, 'session');
  t.true(session.attributes.includes('secure'));
  t.true(session.attributes.includes('httponly'));

  const api = await request(app.baseUrl, '/api/auth/login', { body: admin, headers: HTTPS });
  t.is(api.status, 200);
  t.true(only(api, 'session').attributes.includes('secure'), 'the API login too');
});

test('over HTTPS: a planted bare console_csrf pair does not sign in (403)', async (t) => {
  const planted = 'p'.repeat(43);
  const res = await request(app.baseUrl, '/admin/login', {
    method: 'POST',
    cookie: `console_csrf=${planted}`,
    headers: { ...HTTPS, ...FORM },
    rawBody: new URLSearchParams({ _csrf: planted, ...admin }).toString(),
    redirect: 'manual',
  });
  t.is(res.status, 403);
  t.false(cookiesOf(res).some((c) => c.name === 'session'));
});

test('over HTTPS: the one-use cookie carrying a new API key (and the notice) is __Host- and Secure', async (t) => {
  const { res } = await consoleSignIn(HTTPS);
  const session = sessionCookie(res);
  const customer = await insertCustomer(app.db);
  const page = await request(app.baseUrl, '/admin/settings', { cookie: session, headers: HTTPS });
  const created = await request(app.baseUrl, '/admin/api-keys', {
    method: 'POST',
    cookie: session,
    headers: { ...HTTPS, ...FORM },
    rawBody: new URLSearchParams({
      _csrf: tokenOf(page.text),
      _form: 'api-key-create',
      name: 'Cookie test',
      customerId: customer.id,
    }).toString(),
    redirect: 'manual',
  });
  t.is(created.status, 303, created.text.slice(0, 300));
  for (const name of ['__Host-console_reveal', '__Host-console_notice']) {
    const cookie = only(created, name);
    t.true(cookie.attributes.includes('secure'), name);
    t.true(cookie.attributes.includes('path=/'), name);
    t.true(cookie.attributes.includes('httponly'), name);
  }
  t.false(
    cookiesOf(created).some((c) => !c.name.startsWith('__Host-')),
    'no bare console cookie over HTTPS',
  );

  // The next page shows the key once and clears the cookie with the same name and attributes.
  const reveal = only(created, '__Host-console_reveal');
  const shown = await request(app.baseUrl, '/admin/settings', {
    cookie: `${session}; ${reveal.pair}`,
    headers: HTTPS,
  });
  t.regex(shown.text, /Copy the new API key now/);
  const cleared = only(shown, '__Host-console_reveal');
  t.is(cleared.pair, '__Host-console_reveal=');
  t.true(cleared.attributes.includes('secure'));
});

test('over plain HTTP the cookies keep their bare names and carry no Secure', async (t) => {
  const { form, res } = await consoleSignIn({});
  t.false(only(form, 'console_csrf').attributes.includes('secure'));
  t.is(res.status, 303);
  t.false(only(res, 'session').attributes.includes('secure'));
});
