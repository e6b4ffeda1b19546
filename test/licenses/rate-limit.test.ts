/**
 * Rate limit of the public license endpoints (D-16): per client IP, a fixed one-minute window,
 * `licenses.rate_limit_per_minute` (default 600), verify and validate counted together, 429
 * rate_limited with Retry-After. Each test starts its own app on its own database, so the counts of one never reach
 * another. The count is shared by every web process on a database (issue 20; across processes:
 * shared-rate-limit.test.ts).
 */
import test from 'ava';
import { RateLimiter } from '../../src/http/rate-limit.ts';
import { AppError } from '../../src/errors.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { purgeExpired } from '../../src/housekeeping/service.ts';
import { request, type Json } from '../helpers/http.ts';
import { issueLicense, startLicenseApp, validate, verify, type LicenseKit } from './fixtures.ts';

/** An app whose public limit is `perMinute`, set before its first public call (settings are cached 5 s). */
async function appLimitedTo(perMinute: number, env: Record<string, string> = {}): Promise<LicenseKit> {
  const kit = await startLicenseApp(env);
  const res = await kit.admin('/api/settings', {
    method: 'PUT',
    body: { 'licenses.rate_limit_per_minute': perMinute },
  });
  if (res.status !== 200) throw new Error(`setting: ${res.status} ${res.text}`);
  return kit;
}

function assertRateLimited(
  t: import('ava').ExecutionContext,
  res: { status: number; body: Json; headers: Headers },
  label = '',
) {
  t.is(res.status, 429, label);
  t.is(res.body.error.code, 'rate_limited', label);
  const retryAfter = res.headers.get('retry-after') ?? '';
  t.regex(retryAfter, /^\d+$/, label);
  t.true(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `${label} Retry-After ${retryAfter}`);
}

test(
  'the 6th public call from one IP in a minute is 429 when the limit is 5; ' + 'verify and validate share it',
  async (t) => {
    const kit = await appLimitedTo(5);
    t.teardown(() => kit.close());
    const license = await issueLicense(kit, { maxActivations: 10 });
    for (let i = 0; i < 3; i++) t.is((await verify(kit, license.licenseKey)).status, 200, `verify ${i + 1}`);
    for (let i = 0; i < 2; i++)
      t.is((await validate(kit, license.licenseKey, `d${i}`)).status, 200, `validate ${i + 1}`);

    assertRateLimited(t, await verify(kit, license.licenseKey), 'verify 6');
    const refusedValidate = await validate(kit, license.licenseKey, 'late-device');
    assertRateLimited(t, refusedValidate, 'validate 7');
    // A refused validate registers nothing.
    t.is((await kit.admin(`/api/licenses/${license.licenseKey}`)).body.currentActivations, 2);
    // The admin API is not behind this limit.
    t.is((await kit.admin('/api/licenses')).status, 200);
  },
);

test('unknown keys count too: guessing keys is throttled like using one', async (t) => {
  const kit = await appLimitedTo(5);
  t.teardown(() => kit.close());
  for (let i = 0; i < 5; i++) t.is((await verify(kit, `LIC-0000-0000-000${i}`)).status, 404);
  assertRateLimited(t, await verify(kit, 'LIC-0000-0000-0009'));
  assertRateLimited(t, await validate(kit, 'LIC-0000-0000-0009', 'd'));
});

test('an X-Forwarded-For header does not escape the limit when the proxy is not trusted', async (t) => {
  const kit = await appLimitedTo(2);
  t.teardown(() => kit.close());
  const license = await issueLicense(kit);
  const from = (ip: string) =>
    request(kit.app.baseUrl, '/api/licenses/verify', {
      body: { licenseKey: license.licenseKey },
      headers: { 'x-forwarded-for': ip },
    });
  t.is((await from('10.0.0.1')).status, 200);
  t.is((await from('10.0.0.2')).status, 200);
  assertRateLimited(t, await from('10.0.0.3'));
});

test('behind a trusted proxy (TRUST_PROXY) each client IP has its own count', async (t) => {
  const kit = await appLimitedTo(2, { TRUST_PROXY: 'true' });
  t.teardown(() => kit.close());
  const license = await issueLicense(kit);
  const from = (ip: string) =>
    request(kit.app.baseUrl, '/api/licenses/verify', {
      body: { licenseKey: license.licenseKey },
      headers: { 'x-forwarded-for': ip },
    });
  t.is((await from('198.51.100.1')).status, 200);
  t.is((await from('198.51.100.1')).status, 200);
  assertRateLimited(t, await from('198.51.100.1'));
  t.is((await from('198.51.100.2')).status, 200, 'another client is not throttled by the first');
});

// The client writes the left of X-Forwarded-For; the proxy appends the address it saw on the right.
// Only PROXY_HOPS entries from the right are trusted (Koa maxIpsCount).
test('behind one trusted proxy, a client-written X-Forwarded-For entry does not pick the counted IP', async (t) => {
  const kit = await appLimitedTo(2, { TRUST_PROXY: 'true' });
  t.teardown(() => kit.close());
  const license = await issueLicense(kit);
  // What the proxy forwards: whatever the client sent, then the address it saw.
  const spoofed = (n: number) =>
    request(kit.app.baseUrl, '/api/licenses/verify', {
      body: { licenseKey: license.licenseKey },
      headers: { 'x-forwarded-for': `203.0.113.${n}, 198.51.100.7` },
    });
  t.is((await spoofed(1)).status, 200);
  t.is((await spoofed(2)).status, 200);
  assertRateLimited(t, await spoofed(3));
});

test('the default is 600 a minute: 601 concurrent verifies give 600 answers and one 429', async (t) => {
  const kit = await startLicenseApp();
  t.teardown(() => kit.close());
  const license = await issueLicense(kit);
  const answers = await Promise.all(Array.from({ length: 601 }, () => verify(kit, license.licenseKey)));
  t.is(answers.filter((r) => r.status === 200).length, 600);
  const limited = answers.filter((r) => r.status === 429);
  t.is(limited.length, 1);
  assertRateLimited(t, limited[0]!);
});

/** A limiter on a database of its own (the shared windows live in `rate_limit_windows`). */
async function limiterOnNewDatabase(t: import('ava').ExecutionContext, maxKeys?: number): Promise<RateLimiter> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  return new RateLimiter(database.knex, 'test', 60_000, maxKeys);
}

test(
  'RateLimiter: a fixed window per key; ' + 'Retry-After counts down to the window end; a new window starts afresh',
  async (t) => {
    const limiter = await limiterOnNewDatabase(t);
    const t0 = 1_000_000;
    await limiter.hit('a', 2, t0);
    await limiter.hit('a', 2, t0 + 1000);
    const refused = await t.throwsAsync(limiter.hit('a', 2, t0 + 1500), { instanceOf: AppError });
    t.is(refused.code, 'rate_limited');
    t.deepEqual(refused.headers, { 'Retry-After': '59' });
    t.deepEqual((await t.throwsAsync(limiter.hit('a', 2, t0 + 59_800), { instanceOf: AppError })).headers, {
      'Retry-After': '1',
    });
    await t.notThrowsAsync(limiter.hit('b', 2, t0 + 1500), 'another key has its own count');
    await t.notThrowsAsync(limiter.hit('a', 2, t0 + 60_000), 'the next window');
    await t.notThrowsAsync(limiter.hit('a', 2, t0 + 60_001));
    await t.throwsAsync(limiter.hit('a', 2, t0 + 60_002));
    // A raised limit applies at once to the current window.
    await t.notThrowsAsync(limiter.hit('a', 10, t0 + 60_003));
  },
);

test(
  'RateLimiter memory is bounded: ended windows go first, then the oldest live ones; a dropped key keeps its shared ' +
    'count',
  async (t) => {
    const limiter = await limiterOnNewDatabase(t, 100);
    const t0 = 1_000_000;
    for (let i = 0; i < 50; i++) await limiter.hit(`old-${i}`, 5, t0);
    for (let i = 0; i < 50; i++) await limiter.hit(`live-${i}`, 5, t0 + 30_000);
    t.is(limiter.size, 100);
    // The old windows have ended by now: they are dropped, the live ones keep their counts.
    await limiter.hit('newcomer', 5, t0 + 61_000);
    t.is(limiter.size, 51);
    for (let i = 0; i < 4; i++) await limiter.hit('live-0', 5, t0 + 61_000);
    await t.throwsAsync(
      limiter.hit('live-0', 5, t0 + 61_000),
      { instanceOf: AppError },
      'live-0 kept its count of 1 + 4',
    );

    // A flood of distinct keys within one window never grows the map past its bound.
    for (let i = 0; i < 1000; i++) await limiter.hit(`flood-${i}`, 5, t0 + 62_000);
    t.true(limiter.size <= 100);
    // The flood pushed live-1 out of memory (the oldest live windows go first); its count is the database's: 4 more,
    // then refused.
    for (let i = 0; i < 4; i++) await limiter.hit('live-1', 5, t0 + 62_000);
    await t.throwsAsync(limiter.hit('live-1', 5, t0 + 62_000), { instanceOf: AppError });
  },
);

test('housekeeping deletes the shared windows that have ended, and keeps live ones', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const limiter = new RateLimiter(database.knex, 'test', 60_000);
  const t0 = Date.now() - 120_000;
  await limiter.hit('ended', 5, t0);
  await limiter.hit('live', 5);
  const counts = await purgeExpired(database.knex, new Date());
  t.is(counts.rateLimitWindows, 1);
  t.deepEqual(
    (await database.knex('rate_limit_windows').select('key')).map((r) => r.key),
    ['test:live'],
  );
});

test('heartbeats count against the same limit as verify and validate (D-102)', async (t) => {
  const kit = await appLimitedTo(4);
  t.teardown(() => kit.close());
  const license = await issueLicense(kit, { heartbeatIntervalSeconds: 60 });
  const beat = () =>
    request(kit.app.baseUrl, '/api/licenses/heartbeat', { body: { licenseKey: license.licenseKey, deviceId: 'd' } });
  t.is((await validate(kit, license.licenseKey, 'd')).status, 200);
  t.is((await verify(kit, license.licenseKey)).status, 200);
  t.is((await beat()).status, 200);
  t.is((await beat()).status, 200);
  assertRateLimited(t, await beat(), 'heartbeat 5');
  assertRateLimited(t, await verify(kit, license.licenseKey), 'verify 6');
  // Unknown devices count too.
  const other = await appLimitedTo(1);
  t.teardown(() => other.close());
  t.is(
    (
      await request(other.app.baseUrl, '/api/licenses/heartbeat', {
        body: { licenseKey: 'LIC-0000-0000-0000', deviceId: 'x' },
      })
    ).status,
    404,
  );
  assertRateLimited(
    t,
    await request(other.app.baseUrl, '/api/licenses/heartbeat', {
      body: { licenseKey: 'LIC-0000-0000-0000', deviceId: 'x' },
    }),
    'unknown heartbeat 2',
  );
});
