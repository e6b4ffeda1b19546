/**
 * Token guessing (H-1): 10,000 random tokens open nothing, and the page is rate limited per client IP as the public
 * license endpoints are: a guesser is refused (429) while another client still gets its invoice.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import { adminCtx, makeInvoice } from '../payments/fixtures.ts';

async function appWithLimit(limit: number): Promise<{ app: TestApp; hostedPath: string }> {
  const app = await startTestApp({ TRUST_PROXY: 'true' });
  const c = await adminCtx(app);
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: c.cookie,
    body: { 'invoices.hosted_rate_limit_per_minute': limit },
  });
  if (res.status !== 200) throw new Error(res.text);
  const invoice = await makeInvoice(c);
  return { app, hostedPath: new URL(invoice.hostedUrl).pathname };
}

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

test('10,000 random tokens are all 404', async (t) => {
  t.timeout(120_000);
  const { app, hostedPath } = await appWithLimit(1_000_000);
  t.teardown(() => app.close());
  const statuses = new Map<number, number>();
  const TOTAL = 10_000;
  let next = 0;
  const worker = async () => {
    while (next < TOTAL) {
      next++;
      const token = randomBytes(32).toString('base64url');
      const res = await fetch(`${app.baseUrl}/i/${token}`, from('10.0.0.1'));
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  t.deepEqual([...statuses], [[404, TOTAL]]);
  t.is((await request(app.baseUrl, hostedPath, from('10.0.0.1'))).status, 200, 'the real link still opens');
});

test('a guesser past the limit is refused (429) while another client opens its invoice', async (t) => {
  const { app, hostedPath } = await appWithLimit(20);
  t.teardown(() => app.close());
  const guesses = [];
  for (let i = 0; i < 30; i++)
    guesses.push((await request(app.baseUrl, `/i/${randomBytes(32).toString('base64url')}`, from('10.0.0.7'))).status);
  t.deepEqual([...new Set(guesses.slice(0, 20))], [404]);
  t.deepEqual([...new Set(guesses.slice(20))], [429]);
  const limited = await request(app.baseUrl, hostedPath, from('10.0.0.7'));
  t.is(limited.status, 429, 'the guesser is refused even its real link until the window ends');
  t.truthy(limited.headers.get('retry-after'));
  const other = await request(app.baseUrl, hostedPath, from('10.0.0.8'));
  t.is(other.status, 200);
  t.true(other.text.includes('Pay') || other.text.includes('Download PDF'));
});
