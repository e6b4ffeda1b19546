/** `npm run user:create` (D-10), run as the real child process against this file's database. */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  // No ADMIN_* or LOG_LEVEL from the outer environment: each test says exactly what the command sees.
  const { ADMIN_EMAIL: _e, ADMIN_PASSWORD: _p, LOG_LEVEL: _l, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/auth/cli-create-user.ts', ...args],
      { env: { ...inherited, DATABASE_URL: app.database.url, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const newEmail = () => `cli-${randomUUID()}@example.test`;
const login = (email: string, password: string) =>
  request(app.baseUrl, '/api/auth/login', { body: { email, password } });

test('creates an admin whose id it prints, who can then log in over HTTP', async (t) => {
  const email = newEmail();
  const result = await runCli(['--email', email, '--password', 'cli secret pw']);
  t.is(result.code, 0, result.stderr);
  // Only the id on stdout, so scripts can capture it.
  t.regex(result.stdout, /^[0-9a-f-]{36}\n$/);
  const id = result.stdout.trim();
  const row = await app.db('users').where({ id }).first();
  t.is(row.email, email);
  t.is(row.role, 'admin');
  t.is(row.auth_source, 'local');
  t.true(row.password_hash.startsWith('$argon2id$'));
  const res = await login(email, 'cli secret pw');
  t.is(res.status, 200);
  t.deepEqual(res.body.user, { id, email, role: 'admin' });
});

test('--role sets another role', async (t) => {
  const email = newEmail();
  const result = await runCli(['--email', email, '--password', 'pw', '--role', 'support']);
  t.is(result.code, 0, result.stderr);
  t.is((await app.db('users').where({ email }).first()).role, 'support');
});

test('without flags it takes ADMIN_EMAIL and ADMIN_PASSWORD from the environment', async (t) => {
  const email = newEmail();
  const result = await runCli([], { ADMIN_EMAIL: email, ADMIN_PASSWORD: 'from env' });
  t.is(result.code, 0, result.stderr);
  t.is((await login(email, 'from env')).status, 200);
});

test('a duplicate email (in any case) exits non-zero with a clear message and changes nothing', async (t) => {
  const email = newEmail();
  t.is((await runCli(['--email', email, '--password', 'first'])).code, 0);
  const again = await runCli(['--email', email.toUpperCase(), '--password', 'second']);
  t.not(again.code, 0);
  t.regex(again.stderr, /already exists/);
  t.is(again.stdout.trim(), '');
  t.is((await login(email, 'first')).status, 200);
  t.is((await app.db('users').whereRaw('lower(email) = lower(?)', [email])).length, 1);
});

test('a missing password or an unknown flag is a usage error (exit 2)', async (t) => {
  const missing = await runCli(['--email', newEmail()]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /--password/);
  t.regex(missing.stderr, /usage:/);
  const unknown = await runCli(['--email', newEmail(), '--password', 'x', '--admin']);
  t.is(unknown.code, 2);
});

test('an invalid email or role is refused (exit 1) naming the field', async (t) => {
  const badEmail = await runCli(['--email', 'not-an-email', '--password', 'x']);
  t.is(badEmail.code, 1);
  t.regex(badEmail.stderr, /email/);
  const badRole = await runCli(['--email', newEmail(), '--password', 'x', '--role', 'Has Spaces']);
  t.is(badRole.code, 1);
  t.regex(badRole.stderr, /role/);
});
