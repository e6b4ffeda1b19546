import { randomUUID } from 'node:crypto';
import test from 'ava';
import argon2 from 'argon2';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request, sessionCookie, type JsonResponse } from '../helpers/http.ts';

let app: TestApp;
let adminCookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie: adminCookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const DAY_MS = 86_400_000;
const tokenOf = (cookie: string) => cookie.slice('session='.length);
const login = (email: string, password: string, cookie?: string) =>
  request(app.baseUrl, '/api/auth/login', { body: { email, password }, cookie });

function setCookieHeader(res: JsonResponse): string {
  const all = res.headers.getSetCookie();
  if (all.length !== 1) throw new Error(`expected one Set-Cookie, got ${JSON.stringify(all)}`);
  return all[0]!;
}

async function sessionRow(cookie: string) {
  return app
    .db('sessions')
    .where({ token_hash: sha256Hex(tokenOf(cookie)) })
    .first();
}

test(
  'login answers {user:{id,email,role}} and an HttpOnly, SameSite=Lax, Path=/ cookie without Secure outside ' +
    'production',
  async (t) => {
    const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
    const res = await login(email, password);
    t.is(res.status, 200);
    const user = await app.db('users').where({ email }).first();
    t.deepEqual(res.body, { user: { id: user.id, email, role: 'admin' } });
    const header = setCookieHeader(res);
    t.regex(header, /^session=[A-Za-z0-9_-]+;/);
    const attributes = header.split(';').map((a) => a.trim().toLowerCase());
    t.true(attributes.includes('httponly'));
    t.true(attributes.includes('samesite=lax'));
    t.true(attributes.includes('path=/'));
    t.false(attributes.includes('secure'));
  },
);

test('the session token is 256 random bits and only its SHA-256 is stored', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  const token = tokenOf(cookie);
  t.is(Buffer.from(token, 'base64url').length, 32);
  const row = await sessionRow(cookie);
  t.truthy(row);
  t.regex(row.token_hash, /^[0-9a-f]{64}$/);
  t.not(row.token_hash, token);
  t.is(await app.db('sessions').where({ token_hash: token }).first(), undefined);
});

test('wrong password and unknown email answer the same 401 invalid_credentials, with no cookie', async (t) => {
  const { email } = await loginAs(app.baseUrl, app.db, 'admin');
  const wrongPassword = await login(email, 'not the password');
  const unknownEmail = await login('nobody-here@example.test', 'not the password');
  t.is(wrongPassword.status, 401);
  t.is(unknownEmail.status, 401);
  t.is(wrongPassword.body.error.code, 'invalid_credentials');
  t.deepEqual(unknownEmail.body, wrongPassword.body);
  t.deepEqual(wrongPassword.headers.getSetCookie(), []);
  t.deepEqual(unknownEmail.headers.getSetCookie(), []);
});

test.serial(
  'an unknown email still runs an Argon2 check, as a wrong password does (both take its time, D-11)',
  async (t) => {
    const { email } = await loginAs(app.baseUrl, app.db, 'admin');
    // The app runs in this process and looks `verify` up on the module each time: watch what it is asked to verify.
    const verify = argon2.verify;
    const checked: Array<{ password: string; hash: string }> = [];
    argon2.verify = (async (hash: string, password: string | Buffer, ...rest: unknown[]) => {
      checked.push({ hash, password: String(password) });
      return (verify as (...args: unknown[]) => Promise<boolean>)(hash, password, ...rest);
    }) as typeof argon2.verify;
    try {
      await app.db('login_failures').delete();
      t.is((await login(email, 'wrong password for a known email')).status, 401);
      t.is((await login(`ghost-${randomUUID()}@example.test`, 'a password for no one')).status, 401);
    } finally {
      argon2.verify = verify;
      await app.db('login_failures').delete();
    }
    const [known, ...moreKnown] = checked.filter((c) => c.password === 'wrong password for a known email');
    const [unknown, ...moreUnknown] = checked.filter((c) => c.password === 'a password for no one');
    t.deepEqual([moreKnown, moreUnknown], [[], []], 'one check each');
    t.regex(known?.hash ?? '', /^\$argon2id\$/);
    t.regex(unknown?.hash ?? '', /^\$argon2id\$/, 'the unknown email is checked against a hash too');
    // `$argon2id$v=19$m=65536,t=3,p=4$salt$hash`: the same version and cost, so the same work.
    const cost = (hash = '') => hash.split('$').slice(1, 4);
    t.deepEqual(cost(unknown?.hash), cost(known?.hash));
  },
);

test('the email is matched case-insensitively', async (t) => {
  const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
  const res = await login(`  ${email.toUpperCase()} `, password);
  t.is(res.status, 200);
  t.is(res.body.user.email, email);
});

test('a missing password is a 400 invalid_request naming the field', async (t) => {
  const res = await request(app.baseUrl, '/api/auth/login', { body: { email: 'a@b.test' } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['password'],
  );
});

test.serial('session lifetime follows auth.session_expiry_days (default 7)', async (t) => {
  const expiresInDays = async () => {
    const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
    return ((await sessionRow(cookie)).expires_at.getTime() - Date.now()) / DAY_MS;
  };
  t.true(Math.abs((await expiresInDays()) - 7) < 0.001);

  const put = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: adminCookie,
    body: { 'auth.session_expiry_days': 3 },
  });
  t.is(put.status, 200);
  t.true(Math.abs((await expiresInDays()) - 3) < 0.001);

  const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
  const res = await login(email, password);
  const expires = /Expires=([^;]+)/.exec(setCookieHeader(res))?.[1];
  t.true(Math.abs(Date.parse(expires!) - (Date.now() + 3 * DAY_MS)) < 5_000, 'cookie Expires matches the session');

  await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: adminCookie,
    body: { 'auth.session_expiry_days': 7 },
  });
});

test('a cookie planted before login is not the session afterwards (no fixation)', async (t) => {
  const { email, password } = await loginAs(app.baseUrl, app.db, 'admin');
  const planted = 'session=planted-by-an-attacker-0123456789';
  const res = await login(email, password, planted);
  t.is(res.status, 200);
  const issued = sessionCookie(res);
  t.not(issued, planted);
  t.is((await request(app.baseUrl, '/api/settings', { cookie: planted })).status, 401);
  t.is((await request(app.baseUrl, '/api/settings', { cookie: issued })).status, 200);
  t.is(await sessionRow(planted), undefined);
});

test('logout answers 204, deletes the session row and clears the cookie; the old cookie then gets 401', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  t.truthy(await sessionRow(cookie));
  const res = await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie });
  t.is(res.status, 204);
  t.regex(setCookieHeader(res), /^session=;.*Expires=Thu, 01 Jan 1970/);
  t.is(await sessionRow(cookie), undefined);
  const reused = await request(app.baseUrl, '/api/settings', { cookie });
  t.is(reused.status, 401);
  t.is(reused.body.error.code, 'unauthenticated');
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie })).status, 401);
});

test('logout without a session cookie is a 401', async (t) => {
  const res = await request(app.baseUrl, '/api/auth/logout', { method: 'POST' });
  t.is(res.status, 401);
  t.is(res.body.error.code, 'unauthenticated');
});

test('a non-admin user can still log out of their own session', async (t) => {
  const { cookie } = await loginAs(app.baseUrl, app.db, 'support');
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie })).status, 204);
  t.is(await sessionRow(cookie), undefined);
});

test("logging out one session leaves the same user's other sessions alive", async (t) => {
  const { email, password, cookie: first } = await loginAs(app.baseUrl, app.db, 'admin');
  const second = sessionCookie(await login(email, password));
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie: first })).status, 204);
  t.is((await request(app.baseUrl, '/api/settings', { cookie: second })).status, 200);
});

test('in production the session cookie is also Secure', async (t) => {
  const prod = await startTestApp({ NODE_ENV: 'production' });
  try {
    const { email, password } = await loginAs(prod.baseUrl, prod.db, 'admin');
    const res = await request(prod.baseUrl, '/api/auth/login', { body: { email, password } });
    t.is(res.status, 200);
    t.true(
      setCookieHeader(res)
        .split(';')
        .map((a) => a.trim())
        .includes('Secure'),
    );
  } finally {
    await prod.close();
  }
});
