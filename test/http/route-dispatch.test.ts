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

test('HEAD answers a GET route; a method a known path does not take is a 405 with Allow (issue 33)', async (t) => {
  const head = await fetch(`${app.baseUrl}/api/products/${productId}`, { method: 'HEAD', headers: { cookie } });
  t.is(head.status, 200);
  const cases: [string, string, string][] = [
    ['POST', `/api/products/${productId}`, 'GET, HEAD, PUT, DELETE'],
    ['PATCH', `/API/Products/${productId}/`, 'GET, HEAD, PUT, DELETE'],
    ['DELETE', '/api/settings', 'GET, HEAD, PUT'],
    ['PUT', '/api/billing/cron/lifecycle', 'POST'],
    // Two routes' paths match: either one's methods are allowed.
    ['POST', '/api/licenses/signing-keys', 'GET, HEAD, PUT, DELETE'],
  ];
  for (const [method, path, allow] of cases) {
    const wrong = await request(app.baseUrl, path, { method, cookie, body: {} });
    t.is(wrong.status, 405, `${method} ${path}`);
    t.is(wrong.headers.get('allow'), allow, `${method} ${path}`);
    t.is(wrong.body.error.code, 'method_not_allowed');
    t.regex(wrong.body.error.message, new RegExp(`${method}.*${allow}`));
  }
  // Without credentials too: the path and its methods are public in the document; nothing is read or run.
  t.is((await request(app.baseUrl, '/api/settings', { method: 'DELETE' })).status, 405);
  // A path no route has is still a 404, whatever the method.
  const unknown = await request(app.baseUrl, '/api/no-such-thing', { method: 'PATCH', body: {} });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  t.is(unknown.headers.get('allow'), null);
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
