/** D-14: API keys are shown once, stored as SHA-256, listed without the key, revoked with DELETE. */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { authenticateApiKey } from '../../src/api-keys/service.ts';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createKey, insertCustomer, V1_PROBE_PATH } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let customerId: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  customerId = await insertCustomer(app.db);
});
test.after.always(async () => app?.close());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  request(app.baseUrl, '/api/api-keys', { cookie, body, headers });
const keyRow = (id: string) => app.db('api_keys').where({ id }).first();

test(
  'POST answers 201 {id, name, customerId, key, prefix, createdAt}; ' + 'the key is bsk_ and 256 random bits',
  async (t) => {
    const before = Date.now();
    const res = await post({ name: 'Checkout integration', customerId });
    t.is(res.status, 201);
    t.like(res.body, { name: 'Checkout integration', customerId, expiresAt: null, revokedAt: null, lastUsedAt: null });
    t.regex(res.body.id, /^[0-9a-f-]{36}$/);
    t.regex(res.body.key, /^bsk_[A-Za-z0-9_-]+$/);
    const randomBytes = Buffer.from(res.body.key.slice('bsk_'.length), 'base64url');
    t.true(randomBytes.length * 8 >= 192, `${randomBytes.length * 8} bits`);
    t.true(res.body.key.startsWith(res.body.prefix));
    t.true(res.body.prefix.length < res.body.key.length - 32, 'the shown prefix leaves the secret part secret');
    t.true(Math.abs(Date.parse(res.body.createdAt) - before) < 60_000);
    t.regex(res.body.createdAt, /Z$/);
  },
);

test('only the SHA-256 of the key is stored', async (t) => {
  const { id, key } = await createKey(app.baseUrl, cookie, customerId);
  const row = await keyRow(id);
  t.is(row.key_hash, sha256Hex(key));
  t.false(JSON.stringify(row).includes(key.slice('bsk_'.length)));
});

test('two keys are different', async (t) => {
  const [a, b] = await Promise.all([
    createKey(app.baseUrl, cookie, customerId),
    createKey(app.baseUrl, cookie, customerId),
  ]);
  t.not(a.key, b.key);
  t.not(a.id, b.id);
});

test('GET lists keys without ever containing the key', async (t) => {
  const { id, key, prefix } = await createKey(app.baseUrl, cookie, customerId);
  const res = await request(app.baseUrl, '/api/api-keys', { cookie });
  t.is(res.status, 200);
  const listed = res.body.find((k: { id: string }) => k.id === id);
  t.like(listed, { id, customerId, prefix, revokedAt: null });
  t.false('key' in listed);
  t.false(res.text.includes(key));
  t.false(res.text.includes(key.slice(prefix.length)));
});

test('GET filters by customerId', async (t) => {
  const other = await insertCustomer(app.db, 'Other Co');
  const { id } = await createKey(app.baseUrl, cookie, other);
  const res = await request(app.baseUrl, `/api/api-keys?customerId=${other}`, { cookie });
  t.deepEqual(
    res.body.map((k: { id: string }) => k.id),
    [id],
  );
});

test('an unknown customerId is 400 customer_not_found', async (t) => {
  const res = await post({ name: 'x', customerId: randomUUID() });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'customer_not_found');
});

test('a malformed customerId or a missing name is 400 invalid_request naming each field', async (t) => {
  const res = await post({ customerId: 'not-a-uuid' });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), ['customerId', 'name']);
});

test('an expiresAt in the past is 400; a future one is kept', async (t) => {
  const past = await post({ name: 'x', customerId, expiresAt: '2020-01-01' });
  t.is(past.status, 400);
  t.is(past.body.error.details[0].path, 'expiresAt');
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const ok = await post({ name: 'x', customerId, expiresAt: future });
  t.is(ok.status, 201);
  t.is(ok.body.expiresAt, future);
});

test('DELETE revokes (204, revokedAt listed); again or unknown is 404; a malformed id is 404', async (t) => {
  const { id } = await createKey(app.baseUrl, cookie, customerId);
  t.is((await request(app.baseUrl, `/api/api-keys/${id}`, { method: 'DELETE', cookie })).status, 204);
  t.truthy((await keyRow(id)).revoked_at);
  const again = await request(app.baseUrl, `/api/api-keys/${id}`, { method: 'DELETE', cookie });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'not_found');
  t.is((await request(app.baseUrl, `/api/api-keys/${randomUUID()}`, { method: 'DELETE', cookie })).status, 404);
  t.is((await request(app.baseUrl, '/api/api-keys/nope', { method: 'DELETE', cookie })).status, 404);
  const listed = (await request(app.baseUrl, '/api/api-keys', { cookie })).body.find(
    (k: { id: string }) => k.id === id,
  );
  t.truthy(listed.revokedAt);
});

test('an Idempotency-Key replay answers the same record without the key, and creates nothing new', async (t) => {
  const headers = { 'idempotency-key': `keys-${randomUUID()}` };
  const first = await post({ name: 'replayed', customerId }, headers);
  const second = await post({ name: 'replayed', customerId }, headers);
  t.is(first.status, 201);
  t.is(second.status, 201);
  t.is(second.body.id, first.body.id);
  t.regex(first.body.key, /^bsk_/);
  t.is(second.body.key, null);
  t.is((await app.db('api_keys').where({ name: 'replayed' })).length, 1);
});

test('lastUsedAt is set by a v1 call', async (t) => {
  const { id, key } = await createKey(app.baseUrl, cookie, customerId);
  const before = Date.now();
  t.is((await request(app.baseUrl, V1_PROBE_PATH, { bearer: key })).status, 200);
  const listed = (await request(app.baseUrl, '/api/api-keys', { cookie })).body.find(
    (k: { id: string }) => k.id === id,
  );
  t.truthy(listed.lastUsedAt);
  t.true(Math.abs(Date.parse(listed.lastUsedAt) - before) < 60_000);
});

test('lastUsedAt is written at most once a minute per key', async (t) => {
  const { id, key } = await createKey(app.baseUrl, cookie, customerId);
  await authenticateApiKey(app.db, key);
  const first = (await keyRow(id)).last_used_at as Date;
  await authenticateApiKey(app.db, key);
  t.is(((await keyRow(id)).last_used_at as Date).getTime(), first.getTime());
});

test(
  'authenticateApiKey: a live key names its customer; ' + 'revoked, expired, unknown or malformed keys name nobody',
  async (t) => {
    const live = await createKey(app.baseUrl, cookie, customerId);
    t.deepEqual(await authenticateApiKey(app.db, live.key), { apiKeyId: live.id, customerId });

    const revoked = await createKey(app.baseUrl, cookie, customerId);
    await request(app.baseUrl, `/api/api-keys/${revoked.id}`, { method: 'DELETE', cookie });
    t.is(await authenticateApiKey(app.db, revoked.key), undefined);

    const expired = await createKey(app.baseUrl, cookie, customerId, {
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    t.truthy(await authenticateApiKey(app.db, expired.key));
    await app
      .db('api_keys')
      .where({ id: expired.id })
      .update({ expires_at: app.db.raw("now() - interval '1 second'") });
    t.is(await authenticateApiKey(app.db, expired.key), undefined);

    for (const garbage of [
      '',
      'bsk_',
      'bsk_nothing',
      live.key.toUpperCase(),
      live.key.slice(0, -1),
      `${live.key} `,
      'x'.repeat(10_000),
    ]) {
      t.is(await authenticateApiKey(app.db, garbage), undefined, garbage.slice(0, 40));
    }
  },
);
