/**
 * Limits shared across processes (issue 20): two real web processes on one database, clients alternating between
 * their ports or spread over both at once. The public license rate limit (D-16) admits exactly the limit in a
 * window for the sum of both, and login throttling checks at most `max` attempts per email and per IP however the
 * attempts race over both processes. Each test speaks from its own client addresses (TRUST_PROXY) so their
 * counts stay apart.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/http.ts';
import { databaseOfThisFile, startWeb, type WebProcess } from './processes.ts';

const testDatabase = databaseOfThisFile(test);

/** Large enough that each process leases tokens in chunks (a twentieth: 10), as a busy deployment does. */
const RATE_LIMIT = 200;
const MAX_FAILURES = 5;

let started: Promise<WebProcess[]> | undefined;
/** The two web processes, started by the first test (the database of this file is made in a before hook). */
function twoWebs(): Promise<WebProcess[]> {
  started ??= (async () => {
    const db = testDatabase().knex;
    // Before the processes start: settings are cached for 5 s per process.
    await db('settings')
      .insert([
        { key: 'licenses.rate_limit_per_minute', value: JSON.stringify(RATE_LIMIT) },
        { key: 'auth.login_max_failures', value: JSON.stringify(MAX_FAILURES) },
      ])
      .onConflict('key')
      .merge();
    const env = { TRUST_PROXY: 'true', LOG_LEVEL: 'warn' };
    return Promise.all([startWeb(testDatabase().url, { env }), startWeb(testDatabase().url, { env })]);
  })();
  return started;
}

const verifyFrom = (web: WebProcess, ip: string) =>
  request(web.baseUrl, '/api/licenses/verify', {
    body: { licenseKey: 'LIC-0000-0000-0000' },
    headers: { 'x-forwarded-for': ip },
  });

/** An unknown key is a 404 and counts like any other call: admitted means answered other than 429. */
const admitted = (answers: JsonResponse[]) => answers.filter((r) => r.status !== 429).length;

function assertRefusals(t: import('ava').ExecutionContext, answers: JsonResponse[]): number[] {
  const refused = answers.filter((r) => r.status === 429);
  for (const r of refused) t.is(r.body.error.code, 'rate_limited');
  const retryAfters = refused.map((r) => Number(r.headers.get('retry-after')));
  t.true(
    retryAfters.every((s) => Number.isInteger(s) && s >= 1 && s <= 60),
    `Retry-After ${retryAfters.join(',')}`,
  );
  t.true(
    answers.every((r) => r.status === 404 || r.status === 429),
    `statuses ${[...new Set(answers.map((r) => r.status))].join(',')}`,
  );
  return retryAfters;
}

test.serial(
  'rate limit across two web processes, requests alternating: exactly the limit is admitted, the rest 429 with ' +
    'the shared window',
  async (t) => {
    t.timeout(120_000);
    const webs = await twoWebs();
    const ip = '198.51.100.10';
    const answers: { web: number; res: JsonResponse }[] = [];
    for (let i = 0; i < RATE_LIMIT + 60; i++) answers.push({ web: i % 2, res: await verifyFrom(webs[i % 2]!, ip) });
    t.is(admitted(answers.map((a) => a.res)), RATE_LIMIT);
    const retryAfters = assertRefusals(
      t,
      answers.map((a) => a.res),
    );
    t.true(retryAfters.length === 60);
    // One window for both: their last refusals count down to the same end.
    const lastOf = (web: number) =>
      Number(
        answers
          .filter((a) => a.web === web && a.res.status === 429)
          .at(-1)!
          .res.headers.get('retry-after'),
      );
    t.true(Math.abs(lastOf(0) - lastOf(1)) <= 1, `Retry-After ${lastOf(0)} vs ${lastOf(1)}`);
    // Another client is not throttled by the first.
    t.is((await verifyFrom(webs[1]!, '198.51.100.11')).status, 404);
  },
);

test.serial(
  'rate limit across two web processes under concurrency: never more than the limit, and leased tokens are spent',
  async (t) => {
    t.timeout(120_000);
    const webs = await twoWebs();
    const ip = '198.51.100.20';
    const burst = await Promise.all(Array.from({ length: RATE_LIMIT + 100 }, (_, i) => verifyFrom(webs[i % 2]!, ip)));
    t.true(admitted(burst) <= RATE_LIMIT, `burst admitted ${admitted(burst)}`);
    t.true(admitted(burst) >= RATE_LIMIT - 20, `burst admitted ${admitted(burst)}: tokens left unspent in a process`);
    // Whatever a process still holds is spent by the next calls to it; the sum never passes the limit.
    const after: JsonResponse[] = [];
    for (let i = 0; i < 100; i++) after.push(await verifyFrom(webs[i % 2]!, ip));
    t.is(admitted(burst) + admitted(after), RATE_LIMIT);
    assertRefusals(t, [...burst, ...after]);
  },
);

const loginFrom = (web: WebProcess, email: string, ip: string) =>
  request(web.baseUrl, '/api/auth/login', {
    body: { email, password: 'not the password' },
    headers: { 'x-forwarded-for': ip },
  });

test.serial(
  'login throttling across two web processes under concurrency: at most max attempts per email and per IP are checked',
  async (t) => {
    t.timeout(120_000);
    const webs = await twoWebs();
    const email = `target-${randomUUID()}@example.test`;
    const byEmail = await Promise.all(
      Array.from({ length: 24 }, (_, i) => loginFrom(webs[i % 2]!, email, `203.0.113.${i + 1}`)),
    );
    t.is(byEmail.filter((r) => r.status === 401).length, MAX_FAILURES);
    t.is(byEmail.filter((r) => r.status === 429).length, 24 - MAX_FAILURES);
    t.true(byEmail.filter((r) => r.status === 429).every((r) => Number(r.headers.get('retry-after')) > 0));

    const byIp = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        loginFrom(webs[i % 2]!, `guess-${i}-${randomUUID()}@example.test`, '203.0.113.200'),
      ),
    );
    t.is(byIp.filter((r) => r.status === 401).length, MAX_FAILURES);
    t.is(byIp.filter((r) => r.status === 429).length, 24 - MAX_FAILURES);

    const rows = await testDatabase()
      .knex('login_failures')
      .where({ email })
      .orWhere({ ip: '203.0.113.200' })
      .count({ n: '*' });
    t.is(Number(rows[0]!.n), 2 * MAX_FAILURES, 'one failure row per checked attempt');
  },
);
