import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

test('healthz and readyz answer 200', async (t) => {
  t.is((await request(app.baseUrl, '/healthz')).status, 200);
  const ready = await request(app.baseUrl, '/readyz');
  t.is(ready.status, 200);
  t.deepEqual(ready.body, { status: 'ready' });
});

test('every response carries X-Request-Id, echoed when sent', async (t) => {
  const generated = await request(app.baseUrl, '/healthz');
  t.regex(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const echoed = await request(app.baseUrl, '/healthz', { headers: { 'x-request-id': 'abc-123' } });
  t.is(echoed.headers.get('x-request-id'), 'abc-123');
});

test('unknown routes answer 404 in the error shape', async (t) => {
  const res = await request(app.baseUrl, '/api/nope');
  t.is(res.status, 404);
  t.is(res.body.error.code, 'not_found');
  t.is(typeof res.body.error.message, 'string');
});

test('malformed JSON is a 400 invalid_request', async (t) => {
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    rawBody: '{"a":',
    cookie,
    headers: { 'content-type': 'application/json' },
  });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
});

test('a non-JSON body is a 415', async (t) => {
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    rawBody: 'a=b',
    cookie,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(res.status, 415);
  t.is(res.body.error.code, 'unsupported_media_type');
});

test('a body over 1 MiB is a 413 and changes nothing', async (t) => {
  const big = JSON.stringify({ 'company.name': 'x'.repeat(1024 * 1024 + 10) });
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    rawBody: big,
    cookie,
    headers: { 'content-type': 'application/json' },
  });
  t.is(res.status, 413);
  t.is(res.body.error.code, 'payload_too_large');
  const settings = await request(app.baseUrl, '/api/settings', { cookie });
  t.is(settings.body['company.name'], 'Your Company');
});

test('metrics are Prometheus text', async (t) => {
  await request(app.baseUrl, '/healthz');
  const res = await request(app.baseUrl, '/metrics');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /text\/plain/);
  t.regex(res.text, /http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
});

test('the OpenAPI document lists every route with its auth', async (t) => {
  const res = await request(app.baseUrl, '/api/openapi.json');
  t.is(res.status, 200);
  t.is(res.body.openapi, '3.1.0');
  t.truthy(res.body.paths['/api/settings'].put.requestBody);
  t.is(res.body.paths['/api/api-keys/{id}'].delete['x-auth'], 'admin');
  const docs = await request(app.baseUrl, '/docs');
  t.is(docs.status, 200);
  t.regex(docs.text, /<title>Billing service API<\/title>/);
  // D-94: the renderer is served by the service itself, from node_modules (no CDN).
  const scripts = [...docs.text.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)].map((m) => m[1]!);
  t.deepEqual(scripts, ['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/docs.js']);
  for (const path of scripts) {
    const asset = await fetch(app.baseUrl + path);
    t.is(asset.status, 200, path);
    t.true((await asset.arrayBuffer()).byteLength > 100, path);
  }
  t.is((await fetch(`${app.baseUrl}/docs/assets/package.json`)).status, 404);
});

test('security headers are set', async (t) => {
  const res = await request(app.baseUrl, '/healthz');
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('x-frame-options'), 'DENY');
});
