/** D-10: legacy bcrypt hashes ($2a$, $2b$, $2y$) verify and become Argon2id on the next successful login. */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import bcrypt from 'bcryptjs';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

/** bcryptjs writes $2b$; $2a$ and $2y$ are the same algorithm under older labels (PHP writes $2y$). */
function bcryptHash(password: string, variant: '2a' | '2b' | '2y'): string {
  return `$${variant}$${bcrypt.hashSync(password, 4).slice(4)}`;
}

async function insertLegacyUser(variant: '2a' | '2b' | '2y', password: string) {
  const email = `legacy-${variant}-${randomUUID()}@example.test`;
  const hash = bcryptHash(password, variant);
  assertPrefix(hash, variant);
  await app.db('users').insert({ email, password_hash: hash, role: 'admin', auth_source: 'local' });
  return { email, hash };
}

function assertPrefix(hash: string, variant: string) {
  if (!hash.startsWith(`$${variant}$`)) throw new Error(`fixture hash has the wrong prefix: ${hash}`);
}

const storedHash = async (email: string) => (await app.db('users').where({ email }).first()).password_hash as string;
const login = (email: string, password: string) =>
  request(app.baseUrl, '/api/auth/login', { body: { email, password } });

for (const variant of ['2a', '2b', '2y'] as const) {
  test(`a $${variant}$ bcrypt hash logs in and is replaced by Argon2id`, async (t) => {
    const password = `legacy ${variant} password`;
    const { email } = await insertLegacyUser(variant, password);
    const first = await login(email, password);
    t.is(first.status, 200);
    t.is(first.body.user.email, email);
    const upgraded = await storedHash(email);
    t.true(upgraded.startsWith('$argon2id$'), upgraded);
    // The new hash is the same password, and the old one no longer matters.
    t.is((await login(email, password)).status, 200);
    t.is((await login(email, 'not it')).status, 401);
  });

  test(`a wrong password against a $${variant}$ hash is 401 and leaves the hash unchanged`, async (t) => {
    const { email, hash } = await insertLegacyUser(variant, 'the right one');
    const res = await login(email, 'the wrong one');
    t.is(res.status, 401);
    t.is(res.body.error.code, 'invalid_credentials');
    t.is(await storedHash(email), hash);
  });
}
