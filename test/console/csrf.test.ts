/** C-6: a POST to /admin/* without a valid CSRF token answers 403 and changes nothing, whatever its body. */
import test from 'ava';
import { consolePages } from '../../src/console/pages/index.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { changedTables, fingerprintQuery } from '../security/fingerprint.ts';
import { startConsoleKit, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
let session: string;
test.before(async () => {
  kit = await startConsoleKit();
  ({ cookie: session } = await loginAsAdmin(kit.app.baseUrl, kit.app.db));
});
test.after.always(async () => kit?.close());

const TOKEN = 'a'.repeat(43);
const OTHER = 'b'.repeat(43);

// What another site can make a browser send, and what a script could: none carries the form's token.
const BODIES: [label: string, type: string, body: string, cookie: string][] = [
  [
    'JSON',
    'application/json',
    JSON.stringify({ _csrf: TOKEN, name: 'x', email: 'x@example.test', amount: '10' }),
    `console_csrf=${TOKEN}`,
  ],
  [
    'multipart',
    'multipart/form-data; boundary=b',
    `--b\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${TOKEN}\r\n--b--\r\n`,
    `console_csrf=${TOKEN}`,
  ],
  ['text/plain', 'text/plain', `_csrf=${TOKEN}&name=x`, `console_csrf=${TOKEN}`],
  ['no body type', '', `_csrf=${TOKEN}`, `console_csrf=${TOKEN}`],
  [
    'a form without the token',
    'application/x-www-form-urlencoded',
    'name=x&email=x%40example.test&amount=10',
    `console_csrf=${TOKEN}`,
  ],
  [
    'a form with another token',
    'application/x-www-form-urlencoded',
    `_csrf=${OTHER}&name=x&amount=10`,
    `console_csrf=${TOKEN}`,
  ],
  ['a form with no token cookie', 'application/x-www-form-urlencoded', `_csrf=${TOKEN}&name=x&amount=10`, ''],
];

/** Every console action's URL with its parameters filled, sign-out, and a URL no route answers. */
function targets(): string[] {
  const fill = (path: string) =>
    path.replace(/:(\w+)/g, (_, name: string) =>
      name === 'key' ? 'LIC-AAAA-BBBB-CCCC' : name === 'deviceId' ? 'device-1' : '00000000-0000-4000-8000-000000000000',
    );
  return [
    ...consolePages.filter((r) => r.kind === 'action').map((r) => fill(r.path)),
    '/admin/logout',
    '/admin/no-such-page',
  ];
}

test(
  'every console POST without a valid token is 403 with the console page, ' + 'whatever the body; nothing changes',
  async (t) => {
    const fingerprint = await fingerprintQuery(kit.app.db);
    const before = await fingerprint();
    const urls = targets();
    t.true(urls.length > 30);
    for (const url of urls) {
      for (const [label, type, body, csrfCookie] of BODIES) {
        const headers: Record<string, string> = type ? { 'content-type': type } : {};
        const res = await request(kit.app.baseUrl, url, {
          method: 'POST',
          rawBody: body,
          cookie: [session, csrfCookie].filter(Boolean).join('; '),
          headers,
        });
        t.is(res.status, 403, `${url} with ${label}: ${res.text.slice(0, 200)}`);
        t.regex(res.text, /did not come from this console/, `${url} with ${label}`);
      }
    }
    t.deepEqual(changedTables(before, await fingerprint()), []);
    t.is(
      (await request(kit.app.baseUrl, '/api/settings', { cookie: session })).status,
      200,
      'the session survived the sign-out attempts',
    );
  },
);

test('the refusal is a console page: navigation, title and one h1 for a signed-in admin', async (t) => {
  const res = await request(kit.app.baseUrl, '/admin/customers', {
    method: 'POST',
    body: { name: 'x' },
    cookie: session,
  });
  t.is(res.status, 403);
  t.regex(res.text, /<nav aria-label="Main">/);
  t.is(res.text.match(/<h1[ >]/g)?.length, 1);
  t.regex(res.text, /<title>[^<]+ · Billing console<\/title>/);
});

test(
  'sign-in keeps its own rules: a form without the token shows the form again (403); ' + 'a non-form body is 415',
  async (t) => {
    const form = await request(kit.app.baseUrl, '/admin/login', {
      method: 'POST',
      rawBody: 'email=a%40b.c&password=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.is(form.status, 403);
    t.regex(form.text, /input[^>]+name="password"/);
    const json = await request(kit.app.baseUrl, '/admin/login', {
      method: 'POST',
      body: { email: 'a@b.c', password: 'x' },
    });
    t.is(json.status, 415);
  },
);

/** A console form post with the session `cookie` (and whatever else is in it) and these fields. */
const formPost = (path: string, cookie: string, fields: Record<string, string>) =>
  request(kit.app.baseUrl, path, {
    method: 'POST',
    rawBody: new URLSearchParams(fields).toString(),
    cookie,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
  });

/** The `_csrf` field of a console page, as the signed-in browser behind `cookie` gets it. */
async function pageToken(cookie: string): Promise<string> {
  const page = await request(kit.app.baseUrl, '/admin/customers', { cookie });
  return /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
}

const customersNamed = (email: string) => kit.app.db('customers').where({ email }).count({ n: '*' }).first();

// Serial: they write, so they run before the test that checks that nothing changes.
test.serial(
  'issue 33: a forged matching cookie/field pair with a real admin session is 403 and creates nothing',
  async (t) => {
    // Someone who can plant a cookie (a sibling subdomain, plain HTTP) plants the pair's cookie half.
    const forged = 'f'.repeat(43);
    const res = await formPost('/admin/customers', `${session}; console_csrf=${forged}`, {
      _csrf: forged,
      name: 'Forged',
      email: 'forged@example.test',
    });
    // Before issue 33 this was the 303 to the new customer's page.
    t.is(res.status, 403, res.text.slice(0, 200));
    t.is(Number((await customersNamed('forged@example.test'))?.n), 0);
  },
);

test.serial(
  "issue 33: the token is the session's own: another admin's token is refused, the page's own is taken",
  async (t) => {
    const other = await loginAsAdmin(kit.app.baseUrl, kit.app.db);
    const othersToken = await pageToken(other.cookie);
    const refused = await formPost('/admin/customers', session, {
      _csrf: othersToken,
      name: 'Other',
      email: 'other-token@example.test',
    });
    t.is(refused.status, 403);
    t.is(Number((await customersNamed('other-token@example.test'))?.n), 0);

    const own = await formPost('/admin/customers', session, {
      _csrf: await pageToken(session),
      name: 'Own',
      email: 'own-token@example.test',
    });
    t.is(own.status, 303, own.text.slice(0, 200));
    t.is(Number((await customersNamed('own-token@example.test'))?.n), 1);
  },
);
