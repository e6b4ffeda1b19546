/**
 * An admin GET of one row (GET /api/products/:id) and its session, checked by the auth middleware before the
 * handler: 401 without a live session (a logout or an expiry is honoured at once), 403 for another role, the
 * session before a malformed id.
 */
import test from 'ava';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
let productId: string;
test.before(async () => {
  app = await startTestApp();
  [{ id: productId }] = await app
    .db('products')
    .insert({ name: 'Gated', product_type: 'saas', price: '9.00', currency: 'USD' })
    .returning('id');
});
test.after.always(async () => app?.close());

const get = (path: string, cookie?: string) => request(app.baseUrl, path, cookie ? { cookie } : {});

test.serial('an admin reads the product; an unknown id is 404 and a malformed one 404, as before', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  const ok = await get(`/api/products/${productId}`, cookie);
  t.is(ok.status, 200);
  t.like(ok.body, { id: productId, name: 'Gated', price: '9.00' });
  t.is((await get('/api/products/00000000-0000-4000-8000-000000000000', cookie)).body.error.code, 'not_found');
  t.is((await get('/api/products/not-a-uuid', cookie)).status, 404);
});

test.serial(
  'without a live session it is 401 whatever the id, even a malformed one; another role is 403',
  async (t) => {
    const unknown = await get(`/api/products/${productId}`, `session=${'x'.repeat(43)}`);
    t.is(unknown.status, 401);
    t.deepEqual(unknown.body.error, { code: 'unauthenticated', message: 'Session expired or logged out' });
    t.is(
      (await get('/api/products/not-a-uuid', `session=${'x'.repeat(43)}`)).status,
      401,
      'the session is decided before the id',
    );
    t.is((await get(`/api/products/${productId}`, `session=${'y'.repeat(300)}`)).status, 401);
    t.is((await get(`/api/products/${productId}`)).body.error.message, 'Log in first: no session cookie');

    const { cookie } = await loginAs(app.baseUrl, app.db, 'viewer');
    const forbidden = await get(`/api/products/${productId}`, cookie);
    t.is(forbidden.status, 403);
    t.deepEqual(forbidden.body.error, { code: 'forbidden', message: 'This account is not an admin' });
    t.is((await get('/api/products/not-a-uuid', cookie)).status, 403);
  },
);

test.serial('a logout is honoured by the very next read', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await get(`/api/products/${productId}`, cookie)).status, 200);
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie })).status, 204);
  t.is((await get(`/api/products/${productId}`, cookie)).status, 401);
});

test.serial('an expired session is refused the moment it expires', async (t) => {
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  await app
    .db('sessions')
    .update({ expires_at: app.db.raw(`now() - interval '1 second'`) })
    .whereIn('user_id', app.db('users').select('id').where('role', 'admin'));
  t.is((await get(`/api/products/${productId}`, cookie)).status, 401);
});
