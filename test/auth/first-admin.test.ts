/** D-10: the first admin comes from ADMIN_EMAIL / ADMIN_PASSWORD when no user exists yet. */
import test from 'ava';
import { ensureFirstAdmin } from '../../src/auth/first-admin.ts';
import { createLocalUser } from '../../src/auth/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';

const ADMIN_EMAIL = 'first.admin@example.test';
const ADMIN_PASSWORD = 'first admin password';

let app: TestApp;
test.before(async () => {
  app = await startTestApp({ ADMIN_EMAIL, ADMIN_PASSWORD });
});
test.after.always(async () => app?.close());
test.beforeEach(async () => {
  await app.db('users').delete();
});

const users = () => app.db('users').select('email', 'role', 'auth_source', 'password_hash');

test.serial('with no user yet it creates the admin, who can log in', async (t) => {
  await ensureFirstAdmin(app.deps);
  const rows = await users();
  t.is(rows.length, 1);
  t.like(rows[0], { email: ADMIN_EMAIL, role: 'admin', auth_source: 'local' });
  t.true(rows[0].password_hash.startsWith('$argon2id$'));
  const res = await request(app.baseUrl, '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  t.is(res.status, 200);
  t.is(res.body.user.role, 'admin');
});

test.serial('run again (every release) it does nothing, even with other values', async (t) => {
  await ensureFirstAdmin(app.deps);
  await ensureFirstAdmin({
    ...app.deps,
    config: { ...app.deps.config, ADMIN_EMAIL: 'second@example.test', ADMIN_PASSWORD: 'other' },
  });
  const rows = await users();
  t.deepEqual(
    rows.map((r) => r.email),
    [ADMIN_EMAIL],
  );
});

test.serial('when any user exists it creates nothing', async (t) => {
  await createLocalUser(app.db, { email: 'someone@example.test', password: 'pw', role: 'support' });
  await ensureFirstAdmin(app.deps);
  t.deepEqual(
    (await users()).map((r) => r.email),
    ['someone@example.test'],
  );
});

test.serial('without ADMIN_EMAIL or ADMIN_PASSWORD it does nothing', async (t) => {
  await ensureFirstAdmin({ ...app.deps, config: { ...app.deps.config, ADMIN_PASSWORD: undefined } });
  await ensureFirstAdmin({ ...app.deps, config: { ...app.deps.config, ADMIN_EMAIL: undefined } });
  t.is((await users()).length, 0);
});

test.serial('two processes starting at once create exactly one admin and neither fails', async (t) => {
  await Promise.all([ensureFirstAdmin(app.deps), ensureFirstAdmin(app.deps), ensureFirstAdmin(app.deps)]);
  t.deepEqual(
    (await users()).map((r) => r.email),
    [ADMIN_EMAIL],
  );
});

test.serial('an ADMIN_PASSWORD that could never log in stops start-up with a clear error', async (t) => {
  const tooLong = 'x'.repeat(1025);
  await t.throwsAsync(ensureFirstAdmin({ ...app.deps, config: { ...app.deps.config, ADMIN_PASSWORD: tooLong } }), {
    message: /password/,
  });
  t.is((await users()).length, 0);
});
