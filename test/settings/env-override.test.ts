/** D-12: an environment variable overrides the stored row (AUTH_SESSION_EXPIRY_DAYS, LICENSE_KEY_PREFIX). */
import test from 'ava';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { assertSettingOverridesValid, getSetting } from '../../src/settings/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp({ AUTH_SESSION_EXPIRY_DAYS: '2', LICENSE_KEY_PREFIX: 'ACME' });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

test.serial("the app's environment wins over a stored row, on GET and at login", async (t) => {
  const put = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie,
    body: { 'auth.session_expiry_days': 5, 'licenses.key_prefix': 'ROW' },
  });
  t.is(put.status, 200);
  t.is(
    (await app.db('settings').where({ key: 'auth.session_expiry_days' }).first()).value,
    5,
    'the row is kept for when the variable goes',
  );
  const read = await request(app.baseUrl, '/api/settings', { cookie });
  t.is(read.body['auth.session_expiry_days'], 2);
  t.is(read.body['licenses.key_prefix'], 'ACME');

  const { cookie: fresh } = await loginAsAdmin(app.baseUrl, app.db);
  const session = await app
    .db('sessions')
    .where({ token_hash: sha256Hex(fresh.slice('session='.length)) })
    .first();
  const days = (session.expires_at.getTime() - Date.now()) / 86_400_000;
  t.true(Math.abs(days - 2) < 0.001, `session lasts ${days} days`);
});

test('service callers that pass the config see the override; without it the row counts', async (t) => {
  await app
    .db('settings')
    .insert({ key: 'auth.session_expiry_days', value: JSON.stringify(9) })
    .onConflict('key')
    .merge();
  t.is(await getSetting(app.db, 'auth.session_expiry_days', app.deps.config), 2);
  t.is(await getSetting(app.db, 'auth.session_expiry_days', {}), 9);
});

test('an invalid override is reported naming the variable', (t) => {
  t.throws(() => assertSettingOverridesValid({ AUTH_SESSION_EXPIRY_DAYS: 'soon' }), {
    message: /AUTH_SESSION_EXPIRY_DAYS/,
  });
  t.throws(() => assertSettingOverridesValid({ AUTH_SESSION_EXPIRY_DAYS: '0' }), {
    message: /AUTH_SESSION_EXPIRY_DAYS/,
  });
  t.throws(() => assertSettingOverridesValid({ LICENSE_KEY_PREFIX: 'lower-case' }), { message: /LICENSE_KEY_PREFIX/ });
  t.notThrows(() => assertSettingOverridesValid({ AUTH_SESSION_EXPIRY_DAYS: '30', LICENSE_KEY_PREFIX: '' }));
});
