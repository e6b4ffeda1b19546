/**
 * D-13: with auth.provider = idp, login runs the OpenID Connect password grant against a fake
 * Keycloak-style realm on loopback, verifies the access token against the realm's JWKS, and opens
 * our own session. Tests are serial: they share the provider settings.
 */
import test from 'ava';
import { createLocalUser } from '../../src/auth/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { startFakeOidc, type FakeOidc } from '../helpers/fake-oidc.ts';
import { request, sessionCookie } from '../helpers/http.ts';

let app: TestApp;
let idp: FakeOidc;
let adminCookie: string;

const putSettings = (body: Record<string, unknown>) =>
  request(app.baseUrl, '/api/settings', { method: 'PUT', cookie: adminCookie, body });
const login = (email: string, password: string) =>
  request(app.baseUrl, '/api/auth/login', { body: { email, password } });
const sessionCount = async () => Number((await app.db('sessions').count<{ count: number }[]>('* as count'))[0]!.count);

function idpSettings(fake: FakeOidc, overrides: Record<string, unknown> = {}) {
  return {
    'auth.idp.realm_url': fake.realmUrl,
    'auth.idp.client_id': fake.clientId,
    'auth.idp.client_secret': fake.clientSecret,
    'auth.idp.admin_role': 'billing-admin',
    'auth.provider': 'idp',
    ...overrides,
  };
}

test.before(async () => {
  app = await startTestApp();
  idp = await startFakeOidc();
  idp.users.set('alice@corp.test', {
    password: 'alice-pw',
    email: 'alice@corp.test',
    roles: ['billing-admin', 'offline_access'],
  });
  idp.users.set('bob@corp.test', { password: 'bob-pw', email: 'bob@corp.test', roles: ['offline_access'] });
  // A local admin switches the provider over; that session stays ours and keeps working.
  ({ cookie: adminCookie } = await loginAsAdmin(app.baseUrl, app.db));
  const res = await putSettings(idpSettings(idp));
  if (res.status !== 200) throw new Error(`settings: ${res.status} ${res.text}`);
});
test.after.always(async () => {
  await idp?.close();
  await app?.close();
});
test.afterEach.always(async () => {
  idp.signingMode = 'realm';
  await app.db('login_failures').delete();
});

test.serial(
  'a user with the admin role logs in: 200, a local idp user row, a session of ours that opens the admin API',
  async (t) => {
    const res = await login('alice@corp.test', 'alice-pw');
    t.is(res.status, 200);
    const row = await app.db('users').whereRaw('lower(email) = ?', ['alice@corp.test']).first();
    t.truthy(row);
    t.is(row.auth_source, 'idp');
    t.is(row.role, 'admin');
    t.is(row.password_hash, null);
    t.deepEqual(res.body, { user: { id: row.id, email: 'alice@corp.test', role: 'admin' } });
    t.is((await request(app.baseUrl, '/api/settings', { cookie: sessionCookie(res) })).status, 200);
    // The wire format the realm saw: the password grant with our client credentials.
    const sent = idp.tokenRequests.at(-1)!;
    t.is(sent.get('grant_type'), 'password');
    t.is(sent.get('client_id'), idp.clientId);
    t.is(sent.get('client_secret'), idp.clientSecret);
    t.is(sent.get('username'), 'alice@corp.test');
    t.is(sent.get('password'), 'alice-pw');
  },
);

test.serial('a second login reuses the same local row', async (t) => {
  const first = await login('alice@corp.test', 'alice-pw');
  const second = await login('alice@corp.test', 'alice-pw');
  t.is(first.body.user.id, second.body.user.id);
  t.is((await app.db('users').whereRaw('lower(email) = ?', ['alice@corp.test'])).length, 1);
});

test.serial('a user without the admin role logs in (200) but the admin API answers 403', async (t) => {
  const res = await login('bob@corp.test', 'bob-pw');
  t.is(res.status, 200);
  t.not(res.body.user.role, 'admin');
  const settings = await request(app.baseUrl, '/api/settings', { cookie: sessionCookie(res) });
  t.is(settings.status, 403);
  t.is(settings.body.error.code, 'forbidden');
});

test.serial('the role follows the realm at each login: a removed role demotes, a granted one promotes', async (t) => {
  idp.users.set('carol@corp.test', { password: 'carol-pw', email: 'carol@corp.test', roles: ['billing-admin'] });
  t.is((await login('carol@corp.test', 'carol-pw')).body.user.role, 'admin');
  idp.users.get('carol@corp.test')!.roles = [];
  const demoted = await login('carol@corp.test', 'carol-pw');
  t.not(demoted.body.user.role, 'admin');
  t.is((await request(app.baseUrl, '/api/settings', { cookie: sessionCookie(demoted) })).status, 403);
  idp.users.get('carol@corp.test')!.roles = ['billing-admin'];
  const promoted = await login('carol@corp.test', 'carol-pw');
  t.is(promoted.body.user.role, 'admin');
  t.is((await request(app.baseUrl, '/api/settings', { cookie: sessionCookie(promoted) })).status, 200);
});

test.serial('a wrong password at the realm is 401 invalid_credentials, like a local one', async (t) => {
  const before = await sessionCount();
  const res = await login('alice@corp.test', 'not-alice-pw');
  t.is(res.status, 401);
  t.is(res.body.error.code, 'invalid_credentials');
  t.is(await sessionCount(), before);
  const unknown = await login('nobody@corp.test', 'whatever');
  t.deepEqual(unknown.body, res.body);
});

test.serial('local passwords no longer work in idp mode: the realm decides', async (t) => {
  await createLocalUser(app.db, { email: 'local-only@example.test', password: 'local password', role: 'admin' });
  const res = await login('local-only@example.test', 'local password');
  t.is(res.status, 401);
  t.is(res.body.error.code, 'invalid_credentials');
});

test.serial(
  'a token signed by a key the realm never published is 502 identity_provider_error and opens no session',
  async (t) => {
    for (const mode of ['rogue-own-kid', 'rogue-realm-kid'] as const) {
      idp.signingMode = mode;
      const before = await sessionCount();
      const res = await login('alice@corp.test', 'alice-pw');
      t.is(res.status, 502, mode);
      t.is(res.body.error.code, 'identity_provider_error');
      t.deepEqual(res.headers.getSetCookie(), []);
      t.is(await sessionCount(), before);
    }
  },
);

test.serial("a wrong client secret is a misconfiguration (502), not the user's wrong password", async (t) => {
  t.is((await putSettings({ 'auth.idp.client_secret': 'not-the-secret' })).status, 200);
  try {
    const res = await login('alice@corp.test', 'alice-pw');
    t.is(res.status, 502);
    t.is(res.body.error.code, 'identity_provider_error');
    t.is(
      await app
        .db('login_failures')
        .count<{ count: number }[]>('* as count')
        .then((r) => Number(r[0]!.count)),
      0,
    );
  } finally {
    await putSettings({ 'auth.idp.client_secret': idp.clientSecret });
  }
});

test.serial('the client secret reads back as "********" and writing the mask back keeps it', async (t) => {
  const read = await request(app.baseUrl, '/api/settings', { cookie: adminCookie });
  t.is(read.body['auth.idp.client_secret'], '********');
  t.false(read.text.includes(idp.clientSecret));
  // A settings form round-trip: everything as read, mask included.
  t.is((await putSettings(read.body)).status, 200);
  const stored = await app.db('settings').where({ key: 'auth.idp.client_secret' }).first();
  t.is(stored.value, idp.clientSecret);
  t.is((await login('alice@corp.test', 'alice-pw')).status, 200, 'the kept secret still works at the realm');
});

test.serial('an identity provider that is down is 502 identity_provider_error', async (t) => {
  const gone = await startFakeOidc();
  await gone.close();
  t.is((await putSettings({ 'auth.idp.realm_url': gone.realmUrl })).status, 200);
  try {
    const res = await login('alice@corp.test', 'alice-pw');
    t.is(res.status, 502);
    t.is(res.body.error.code, 'identity_provider_error');
  } finally {
    await putSettings({ 'auth.idp.realm_url': idp.realmUrl });
  }
  t.is((await login('alice@corp.test', 'alice-pw')).status, 200, 'back once the realm is reachable');
});

// ---- Issue 33, item 8: users keyed on `sub`; a verified email to link a local user; no role from a claim ----

const userRow = (email: string) => app.db('users').whereRaw('lower(email) = lower(?)', [email]).first();

/** A local user with a password, as the CLI or the first-admin step makes it. */
async function localUser(email: string, role: string) {
  await createLocalUser(app.db, { email, password: 'local password', role });
  return userRow(email);
}

test.serial('an unverified email claim does not take over a local admin: refused, the row unchanged', async (t) => {
  const before = await localUser('boss@corp.test', 'admin');
  // Anyone who can set an email at the realm (self-service profile, a realm admin elsewhere) without verifying it.
  idp.users.set('mallory', { password: 'mallory-pw', email: 'boss@corp.test', emailVerified: false, roles: [] });
  const sessions = await sessionCount();
  const res = await login('mallory', 'mallory-pw');
  t.is(res.status, 403, res.text);
  t.is(res.body.error.code, 'forbidden');
  t.regex(res.body.error.message, /not verified/);
  t.deepEqual(await userRow('boss@corp.test'), before);
  t.is(await sessionCount(), sessions);
  // No email_verified claim at all is not a verified email either.
  idp.users.set('mallory2', { password: 'mallory-pw', email: 'BOSS@corp.test', roles: ['billing-admin'] });
  t.is((await login('mallory2', 'mallory-pw')).status, 403);
  t.deepEqual(await userRow('boss@corp.test'), before);
});

test.serial(
  'the typed name is never the user: a token without an email claim does not reach a local admin',
  async (t) => {
    const before = await localUser('root@corp.test', 'admin');
    // A realm username that looks like the admin's email, with no email of its own.
    idp.users.set('root@corp.test', { password: 'root-pw', roles: ['billing-admin'] });
    const res = await login('root@corp.test', 'root-pw');
    t.is(res.status, 502, res.text);
    t.regex(res.body.error.message, /no email claim/);
    t.deepEqual(await userRow('root@corp.test'), before);
    t.deepEqual(res.headers.getSetCookie(), []);
  },
);

test.serial(
  "a verified email links a local user once (sub stored); a claim never changes a local user's role",
  async (t) => {
    const admin = await localUser('dana@corp.test', 'admin');
    idp.users.set('dana', { password: 'dana-pw', email: 'dana@corp.test', emailVerified: true, roles: [] });
    const res = await login('dana', 'dana-pw');
    t.is(res.status, 200, res.text);
    t.deepEqual(res.body.user, { id: admin.id, email: 'dana@corp.test', role: 'admin' });
    const linked = await userRow('dana@corp.test');
    t.is(linked.idp_subject, 'sub-dana');
    t.is(linked.role, 'admin', 'the realm does not give dana the admin role: the local admin stays admin');
    t.is(linked.password_hash, admin.password_hash, 'the local password is kept for a switch back to local');
    t.is((await request(app.baseUrl, '/api/settings', { cookie: sessionCookie(res) })).status, 200);

    // A local user of another role is not promoted by the realm's admin role either.
    const support = await localUser('sam@corp.test', 'support');
    idp.users.set('sam', { password: 'sam-pw', email: 'sam@corp.test', emailVerified: true, roles: ['billing-admin'] });
    t.is((await login('sam', 'sam-pw')).body.user.role, 'support');
    t.is((await userRow('sam@corp.test')).role, support.role);
  },
);

test.serial(
  'users are keyed on sub: a changed email claim is the same user, another sub never takes a linked row',
  async (t) => {
    idp.users.set('erin', {
      password: 'erin-pw',
      email: 'erin@corp.test',
      emailVerified: true,
      roles: ['billing-admin'],
    });
    const first = await login('erin', 'erin-pw');
    t.is(first.status, 200);
    idp.users.get('erin')!.email = 'erin.new@corp.test';
    const second = await login('erin', 'erin-pw');
    t.is(second.status, 200);
    t.is(second.body.user.id, first.body.user.id, 'the same row, found by sub');
    t.is(await userRow('erin.new@corp.test'), undefined, 'no second row for the new email');

    // Another realm account whose verified email is erin's (e.g. re-created): erin's row is linked to erin's sub.
    idp.users.set('erin-again', {
      password: 'erin-pw',
      email: 'erin@corp.test',
      emailVerified: true,
      sub: 'sub-other',
      roles: ['billing-admin'],
    });
    const other = await login('erin-again', 'erin-pw');
    t.is(other.status, 403, other.text);
    t.is((await userRow('erin@corp.test')).idp_subject, 'sub-erin');
  },
);
