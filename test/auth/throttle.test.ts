/**
 * D-16 login throttling: failures per email and per IP in a window. The app trusts X-Forwarded-For
 * here so one test can speak from several addresses; every test resets the failure table (serial).
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let adminCookie: string;
test.before(async () => {
  app = await startTestApp({ TRUST_PROXY: 'true' });
  ({ cookie: adminCookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());
test.beforeEach(async () => {
  await app.db('login_failures').delete();
  await app.db('settings').whereIn('key', ['auth.login_max_failures', 'auth.login_window_minutes']).delete();
});

const login = (email: string, password: string, ip?: string) =>
  request(app.baseUrl, '/api/auth/login', { body: { email, password }, headers: ip ? { 'x-forwarded-for': ip } : {} });

async function setLimits(maxFailures: number, windowMinutes = 15) {
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie: adminCookie,
    body: { 'auth.login_max_failures': maxFailures, 'auth.login_window_minutes': windowMinutes },
  });
  if (res.status !== 200) throw new Error(`settings: ${res.status} ${res.text}`);
}

/** A user that exists but has not logged in yet (loginAs logs in, which is fine: success is no failure). */
async function newUser(role = 'admin') {
  return loginAs(app.baseUrl, app.db, role);
}

/** Failures of `email` from `ip`, `minutesAgo` each (as attempts that were checked and wrong). */
async function insertFailures(email: string, ip: string, minutesAgo: number[]) {
  for (const minutes of minutesAgo)
    await app.db('login_failures').insert({
      email: email.toLowerCase(),
      ip,
      created_at: app.db.raw(`now() - make_interval(secs => ?)`, [minutes * 60]),
    });
}

/** As if `ip` (or every address) had waited `seconds`: its failures move back in time. */
async function wait(seconds: number, ip?: string) {
  const rows = app.db('login_failures');
  await (ip ? rows.where({ ip }) : rows).update({
    created_at: app.db.raw('created_at - make_interval(secs => ?)', [seconds]),
  });
}

function retryAfterSeconds(res: { headers: Headers }): number {
  const value = res.headers.get('retry-after') ?? '';
  if (!/^\d+$/.test(value)) throw new Error(`Retry-After is not integer seconds: "${value}"`);
  return Number(value);
}

test.serial(
  'by default 10 failures from one address refuse it (429, Retry-After to the window), even with the right password',
  async (t) => {
    const { email, password } = await newUser();
    await insertFailures(email, '10.0.0.9', Array(10).fill(1));
    const blocked = await login(email, password, '10.0.0.9');
    t.is(blocked.status, 429);
    t.is(blocked.body.error.code, 'rate_limited');
    const seconds = retryAfterSeconds(blocked);
    t.true(seconds > 13 * 60 && seconds <= 14 * 60, `Retry-After ${seconds}`);
    t.is(blocked.headers.getSetCookie().length, 0);
  },
);

test.serial(
  'failures of one email from max addresses make every new address wait (the account throttle)',
  async (t) => {
    await setLimits(3);
    const { email, password } = await newUser();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) t.is((await login(email, 'wrong', ip)).status, 401);
    t.is((await login(email, password, '10.0.0.4')).status, 429);
    // Another account from a fresh address is untouched.
    const other = await newUser();
    t.is((await login(other.email, other.password, '10.0.0.5')).status, 200);
  },
);

test.serial('failures of other emails from the same IP count for that IP', async (t) => {
  await setLimits(3);
  const { email, password } = await newUser();
  for (let i = 0; i < 3; i++)
    t.is((await login(`stranger-${i}-${randomUUID()}@example.test`, 'guess', '10.0.1.1')).status, 401);
  const blocked = await login(email, password, '10.0.1.1');
  t.is(blocked.status, 429);
  t.true(retryAfterSeconds(blocked) > 0);
  t.is((await login(email, password, '10.0.1.2')).status, 200, 'the same user from another address');
});

test.serial(
  'the limit is a count in the window: failures older than auth.login_window_minutes no longer count',
  async (t) => {
    await setLimits(3, 5);
    const { email, password } = await newUser();
    for (let i = 0; i < 3; i++) await login(email, 'wrong', '10.0.2.1');
    t.is((await login(email, password, '10.0.2.1')).status, 429);
    await app.db('login_failures').update({ created_at: app.db.raw("now() - interval '6 minutes'") });
    t.is((await login(email, password, '10.0.2.1')).status, 200);
  },
);

test.serial('Retry-After counts to when the count drops below the limit, not to the oldest failure', async (t) => {
  await setLimits(3, 15);
  const { email, password } = await newUser();
  for (const minutesAgo of [14, 10, 5, 1]) {
    await app.db('login_failures').insert({
      email: email.toLowerCase(),
      ip: '10.0.3.1',
      created_at: app.db.raw(`now() - interval '${minutesAgo} minutes'`),
    });
  }
  const blocked = await login(email, password, '10.0.3.1');
  t.is(blocked.status, 429);
  // Three remain in the window until the one from 10 minutes ago leaves it, in about 5 minutes.
  const seconds = retryAfterSeconds(blocked);
  t.true(seconds > 290 && seconds <= 300, `Retry-After ${seconds}`);
});

test.serial(
  "a successful login clears its own address's failures for that email, not those of other addresses",
  async (t) => {
    await setLimits(3);
    const { email, password } = await newUser();
    for (let i = 0; i < 2; i++) t.is((await login(email, 'wrong', '10.0.4.1')).status, 401);
    await login(email, 'wrong', '10.0.4.9');
    t.is((await login(email, password, '10.0.4.1')).status, 200);
    for (let i = 0; i < 2; i++) t.is((await login(email, 'wrong', '10.0.4.1')).status, 401);
    t.is((await login(email, password, '10.0.4.1')).status, 200);
    t.is(Number((await app.db('login_failures').where({ ip: '10.0.4.9' }).count({ n: '*' }))[0]!.n), 1);
  },
);

test.serial('a throttled attempt is not itself counted as a failure', async (t) => {
  await setLimits(2);
  const { email } = await newUser();
  for (let i = 0; i < 2; i++) await login(email, 'wrong', '10.0.5.1');
  for (let i = 0; i < 3; i++) t.is((await login(email, 'wrong', '10.0.5.1')).status, 429);
  t.is(
    await app
      .db('login_failures')
      .where({ email: email.toLowerCase() })
      .count<{ count: number }[]>('* as count')
      .then((r) => Number(r[0]!.count)),
    2,
  );
});

test.serial('the email is throttled case-insensitively', async (t) => {
  await setLimits(2);
  const { email, password } = await newUser();
  await login(email.toUpperCase(), 'wrong', '10.0.6.1');
  await login(email, 'wrong', '10.0.6.2');
  t.is((await login(email.toUpperCase(), password, '10.0.6.3')).status, 429);
});

test.serial(
  'concurrent wrong attempts: exactly max are checked (401), the rest are 429, for one email and for one IP',
  async (t) => {
    await setLimits(5);
    const { email } = await newUser();
    const byEmail = await Promise.all(
      Array.from({ length: 20 }, (_, i) => login(email, `wrong ${i}`, `10.0.5.${i + 1}`)),
    );
    t.is(byEmail.filter((r) => r.status === 401).length, 5);
    t.is(byEmail.filter((r) => r.status === 429).length, 15);
    t.is(Number((await app.db('login_failures').where({ email: email.toLowerCase() }).count({ n: '*' }))[0]!.n), 5);

    const byIp = await Promise.all(
      Array.from({ length: 20 }, (_, i) => login(`guess-${i}-${randomUUID()}@example.test`, 'guess', '10.0.6.1')),
    );
    t.is(byIp.filter((r) => r.status === 401).length, 5);
    t.is(byIp.filter((r) => r.status === 429).length, 15);
  },
);

test.serial(
  'more right passwords at once than the limit (a team behind one address) all get in, in turn; a wrong one among ' +
    'them still counts',
  async (t) => {
    await setLimits(3);
    const users = await Promise.all(Array.from({ length: 4 }, () => newUser()));
    const attempts = users.flatMap((u) => Array.from({ length: 3 }, () => login(u.email, u.password, '10.0.9.1')));
    // The wrong one is for an unknown email: a success clears its own email's failures (D-16).
    const answers = await Promise.all([...attempts, login(`nobody-${randomUUID()}@example.test`, 'wrong', '10.0.9.1')]);
    t.deepEqual(
      answers.slice(0, -1).map((r) => r.status),
      Array(12).fill(200),
      'every right password signs in',
    );
    t.is(answers.at(-1)!.status, 401);
    t.is(
      Number((await app.db('login_failures').where({ ip: '10.0.9.1' }).count({ n: '*' }))[0]!.n),
      1,
      'only the wrong one is left, as a failure',
    );
    t.false((await app.db('login_failures').where({ ip: '10.0.9.1' }).first())!.pending);
  },
);

// ---- Issue 33, item 9: nobody can lock the admin out from one address ----------------------------------

test.serial(
  'issue 33: 10+ bad passwords from address A do not lock the admin out: the right password from B signs in; A ' +
    'waits growing delays, then is refused for the window',
  async (t) => {
    const { email, password } = await newUser();
    const [A, B] = ['10.0.33.1', '10.0.33.2'];
    const delays: number[] = [];
    for (let failures = 0; failures < 10; ) {
      const res = await login(email, `wrong ${failures}`, A);
      if (res.status === 401) {
        failures += 1;
        continue;
      }
      t.is(res.status, 429, res.text);
      delays.push(retryAfterSeconds(res));
      await wait(delays.at(-1)!, A);
    }
    t.true(delays.length >= 5, `delays ${delays}`);
    t.true(
      delays.every((d, i) => i === 0 || d > delays[i - 1]!),
      `each delay longer than the one before: ${delays}`,
    );

    const fromB = await login(email, password, B);
    t.is(fromB.status, 200, fromB.text);

    // A's failures stay (B's success clears only B's): A is refused even with the right password, for the window.
    const fromA = await login(email, password, A);
    t.is(fromA.status, 429);
    t.true(retryAfterSeconds(fromA) > 10 * 60, `Retry-After ${retryAfterSeconds(fromA)}`);
  },
);

test.serial(
  'issue 33: a distributed guess (one wrong password from each of many addresses) is bounded by the account: past ' +
    'max addresses, a new address waits a delay that doubles with each further failure',
  async (t) => {
    await setLimits(5);
    const { email, password } = await newUser();
    for (let i = 0; i < 5; i++) t.is((await login(email, 'guess', `10.0.34.${i}`)).status, 401);
    const waits: number[] = [];
    for (let i = 5; i < 8; i++) {
      const refused = await login(email, password, `10.0.34.${i}`);
      t.is(refused.status, 429, 'a new address waits, even with the right password');
      waits.push(retryAfterSeconds(refused));
      await wait(waits.at(-1)!);
      t.is((await login(email, 'guess', `10.0.34.${i}`)).status, 401, 'then one more guess is checked');
    }
    t.true(waits[0]! >= 55 && waits[0]! <= 60, `first wait ${waits}`);
    t.true(
      waits.every((w, i) => i === 0 || w > 1.9 * waits[i - 1]!),
      `each wait about twice the one before: ${waits}`,
    );
    // An address that keeps guessing this account is stopped by the account's count.
    await insertFailures(email, '10.0.34.0', [1, 1]);
    t.is((await login(email, 'guess', '10.0.34.0')).status, 429);
  },
);
