/** D-95: credentials before the body; what the HTTP parser refuses still answers the D-1 JSON shape. */
import net from 'node:net';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(app.baseUrl + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

test(
  'a protected route without credentials answers 401 whatever its body: ' + 'malformed, wrong type, too large',
  async (t) => {
    for (const [label, res] of [
      ['malformed JSON', await post('/api/customers', '{"name":')],
      ['not JSON', await post('/api/customers', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' })],
      ['invalid fields', await post('/api/billing/invoices', '{"customerId": 12}')],
      ['too large', await post('/api/products', JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }))],
    ] as const) {
      t.is(res.status, 401, label);
      t.is(((await res.json()) as { error: { code: string } }).error.code, 'unauthenticated', label);
    }
    const cron = await post('/api/billing/cron/lifecycle', '{');
    t.is(((await cron.json()) as { error: { code: string } }).error.code, 'invalid_cron_secret');
  },
);

test('with credentials the body is still read and checked', async (t) => {
  const res = await post('/api/auth/login', '{"email":');
  t.is(res.status, 400);
  t.is(((await res.json()) as { error: { code: string } }).error.code, 'invalid_request');
});

/** Sends raw bytes and answers what came back. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(app.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(bytes, 'latin1'));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

test('a request with a control byte in a header gets a JSON 400, not a bare one', async (t) => {
  const answer = await raw('GET /api/products HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n');
  t.regex(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.regex(answer, /content-type: application\/json; charset=utf-8/i);
  const body = JSON.parse(answer.split('\r\n\r\n')[1]!);
  t.deepEqual(body, {
    error: { code: 'invalid_request', message: 'The request is not valid HTTP (malformed request line or header)' },
  });
});

test('a malformed request line gets the same JSON 400', async (t) => {
  const answer = await raw('GET /api/products HTTP/9\r\n\r\n');
  t.regex(answer, /^HTTP\/1\.1 400 /);
  t.is(JSON.parse(answer.split('\r\n\r\n')[1]!).error.code, 'invalid_request');
});
