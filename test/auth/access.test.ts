/** Who gets in where: the admin API takes only a live admin session, v1 only a live API key (D-11, D-14, D-15). */
import test from 'ava';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { createKey, insertCustomer, V1_PROBE_PATH } from '../api-keys/fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request, type RequestOptions } from '../helpers/http.ts';

let app: TestApp;
let adminCookie: string;
let customerId: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie: adminCookie } = await loginAsAdmin(app.baseUrl, app.db));
  customerId = await insertCustomer(app.db);
});
test.after.always(async () => app?.close());

const v1Get = (options: RequestOptions) => request(app.baseUrl, V1_PROBE_PATH, options);

const ADMIN_PATHS = ['/api/settings', '/api/api-keys'];

for (const path of ADMIN_PATHS) {
  test(`${path}: a live admin session gets 200 (the control for the refusals below)`, async (t) => {
    t.is((await request(app.baseUrl, path, { cookie: adminCookie })).status, 200);
  });

  test(`${path}: no cookie is 401 unauthenticated`, async (t) => {
    const res = await request(app.baseUrl, path);
    t.is(res.status, 401);
    t.is(res.body.error.code, 'unauthenticated');
  });

  test(`${path}: an unknown session token is 401`, async (t) => {
    t.is(
      (await request(app.baseUrl, path, { cookie: 'session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status,
      401,
    );
  });

  test(`${path}: an expired session is 401`, async (t) => {
    const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
    const tokenHash = sha256Hex(cookie.slice('session='.length));
    await app
      .db('sessions')
      .where({ token_hash: tokenHash })
      .update({ expires_at: app.db.raw("now() - interval '1 second'") });
    const res = await request(app.baseUrl, path, { cookie });
    t.is(res.status, 401);
    t.is(res.body.error.code, 'unauthenticated');
  });

  test(`${path}: a user with a non-admin role is 403 forbidden`, async (t) => {
    const { cookie } = await loginAs(app.baseUrl, app.db, 'support');
    const res = await request(app.baseUrl, path, { cookie });
    t.is(res.status, 403);
    t.is(res.body.error.code, 'forbidden');
  });

  test(`${path}: an API key as Bearer is 401`, async (t) => {
    const { key } = await createKey(app.baseUrl, adminCookie, customerId);
    const res = await request(app.baseUrl, path, { bearer: key });
    t.is(res.status, 401);
    t.is(res.body.error.code, 'unauthenticated');
  });
}

test('a logged-out cookie is 401 on the admin API and its session row is gone', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie })).status, 204);
  t.is(
    await app
      .db('sessions')
      .where({ token_hash: sha256Hex(cookie.slice('session='.length)) })
      .first(),
    undefined,
  );
  for (const path of ADMIN_PATHS) t.is((await request(app.baseUrl, path, { cookie })).status, 401);
});

test('demoting an admin takes effect on the next request', async (t) => {
  const { cookie, email } = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await request(app.baseUrl, '/api/settings', { cookie })).status, 200);
  await app.db('users').where({ email }).update({ role: 'support' });
  t.is((await request(app.baseUrl, '/api/settings', { cookie })).status, 403);
});

test(
  'a non-admin cannot write either: ' + 'PUT /api/settings and POST /api/api-keys are 403 and change nothing',
  async (t) => {
    const { cookie } = await loginAs(app.baseUrl, app.db, 'support');
    const put = await request(app.baseUrl, '/api/settings', {
      method: 'PUT',
      cookie,
      body: { 'company.name': 'Hijacked' },
    });
    t.is(put.status, 403);
    const post = await request(app.baseUrl, '/api/api-keys', { cookie, body: { name: 'x', customerId } });
    t.is(post.status, 403);
    t.is((await request(app.baseUrl, '/api/settings', { cookie: adminCookie })).body['company.name'], 'Your Company');
    t.is((await app.db('api_keys').where({ name: 'x' })).length, 0);
  },
);

test('v1: a live key gets 200 and acts for its own customer (the control for the refusals below)', async (t) => {
  const { key } = await createKey(app.baseUrl, adminCookie, customerId);
  const res = await v1Get({ bearer: key });
  t.is(res.status, 200);
  t.is(res.body.id, customerId);
});

test('v1: a session cookie is 401', async (t) => {
  const res = await v1Get({ cookie: adminCookie });
  t.is(res.status, 401);
  t.is(res.body.error.code, 'unauthenticated');
});

test('v1: a revoked key is 401', async (t) => {
  const { id, key } = await createKey(app.baseUrl, adminCookie, customerId);
  t.is((await v1Get({ bearer: key })).status, 200);
  t.is((await request(app.baseUrl, `/api/api-keys/${id}`, { method: 'DELETE', cookie: adminCookie })).status, 204);
  const res = await v1Get({ bearer: key });
  t.is(res.status, 401);
  t.is(res.body.error.code, 'unauthenticated');
});

test('v1: an expired key is 401', async (t) => {
  const { id, key } = await createKey(app.baseUrl, adminCookie, customerId, {
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  t.is((await v1Get({ bearer: key })).status, 200);
  await app
    .db('api_keys')
    .where({ id })
    .update({ expires_at: app.db.raw("now() - interval '1 second'") });
  t.is((await v1Get({ bearer: key })).status, 401);
});

test('v1: garbage, missing or non-Bearer credentials are 401', async (t) => {
  const { key } = await createKey(app.baseUrl, adminCookie, customerId);
  const attempts = [
    { bearer: 'bsk_not-a-real-key' },
    { bearer: 'garbage' },
    { bearer: `${key}x` },
    {},
    { headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` } },
    { headers: { authorization: key } },
  ];
  for (const options of attempts) {
    const res = await v1Get(options);
    t.is(res.status, 401, JSON.stringify(options));
    t.is(res.body.error.code, 'unauthenticated');
  }
});
