import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

// The routes are dispatched by their first two path segments (web/route-dispatch.ts); what @koa/router matched
// before must still match, and what it did not must not.
let app: TestApp;
let cookie: string;
let productId: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  const created = await request(app.baseUrl, '/api/products', {
    cookie,
    body: { name: 'Widget', productType: 'saas', price: '10' },
  });
  productId = created.body.id;
});
test.after.always(async () => app?.close());

test('paths match case-insensitively and with a trailing slash, as @koa/router matched them', async (t) => {
  for (const path of [`/api/products/${productId}`, `/API/Products/${productId}`, `/api/products/${productId}/`]) {
    const res = await request(app.baseUrl, path, { cookie });
    t.is(res.status, 200, path);
    t.is(res.body.id, productId, path);
  }
  t.is((await request(app.baseUrl, '/healthz/')).status, 200);
});

test('HEAD answers a GET route; a method no route has is a 404 in the error shape', async (t) => {
  const head = await fetch(`${app.baseUrl}/api/products/${productId}`, { method: 'HEAD', headers: { cookie } });
  t.is(head.status, 200);
  const wrong = await request(app.baseUrl, `/api/products/${productId}`, { method: 'POST', cookie, body: {} });
  t.is(wrong.status, 404);
  t.is(wrong.body.error.code, 'not_found');
});

test('the first route registered wins within a bucket: signing-keys is not a license key', async (t) => {
  const res = await request(app.baseUrl, '/api/licenses/signing-keys');
  t.is(res.status, 200);
  t.true(Array.isArray(res.body.keys));
});

test('parameters are decoded; paths that only look alike do not match', async (t) => {
  const encoded = await request(app.baseUrl, `/api/products/${encodeURIComponent(productId)}`, { cookie });
  t.is(encoded.status, 200);
  for (const path of ['/api/productsx/1', '/api//products', `/api/products/${productId}/extra`, '/apiproducts']) {
    const res = await request(app.baseUrl, path, { cookie });
    t.is(res.status, 404, path);
    t.is(res.body.error.code, 'not_found', path);
  }
});
