/** D-12: GET/PUT /api/settings — every key with its default, each value validated, all or nothing. */
import test from 'ava';
import { settingDefinitions } from '../../src/settings/definitions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';

let app: TestApp;
let cookie: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());
// Each test starts from the defaults; serial because they share the one settings table.
test.beforeEach(async () => {
  await app.db('settings').delete();
});

const get = () => request(app.baseUrl, '/api/settings', { cookie });
const put = (body: unknown) => request(app.baseUrl, '/api/settings', { method: 'PUT', cookie, body });
const storedKeys = async () => (await app.db('settings').select('key')).map((r) => r.key as string);

test.serial('GET lists every known key with the documented defaults', async (t) => {
  const res = await get();
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body).sort(), Object.keys(settingDefinitions).sort());
  // The values the decisions document names.
  t.like(res.body, {
    'auth.session_expiry_days': 7,
    'auth.provider': 'local',
    'auth.idp.client_secret': '',
    'auth.login_max_failures': 10,
    'auth.login_window_minutes': 15,
    'licenses.key_prefix': 'LIC',
    'licenses.rate_limit_per_minute': 600,
    'billing.default_tax_rate': '0',
    'billing.payment_terms_days': 14,
    'billing.dunning_final_action': 'cancel',
  });
  t.deepEqual(res.body['billing.dunning_schedule_days'], [1, 3, 5, 7]);
});

test.serial('PUT changes only the given keys, stores them, and answers every setting', async (t) => {
  const res = await put({ 'company.name': 'Acme Billing', 'billing.dunning_schedule_days': [2, 4] });
  t.is(res.status, 200);
  t.is(res.body['company.name'], 'Acme Billing');
  t.deepEqual(res.body['billing.dunning_schedule_days'], [2, 4]);
  t.is(res.body['auth.session_expiry_days'], 7);
  t.deepEqual((await get()).body, res.body);
  t.deepEqual((await storedKeys()).sort(), ['billing.dunning_schedule_days', 'company.name']);
});

test.serial('an unknown key is 400 unknown_setting naming it, and nothing changes', async (t) => {
  const res = await put({ 'company.name': 'Changed', 'auth.no_such_thing': 1 });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'unknown_setting');
  t.regex(res.body.error.message, /auth\.no_such_thing/);
  // The wording of every field a schema does not name (D-90); the code stays the settings' own.
  t.deepEqual(res.body.error.details, [{ path: 'auth.no_such_thing', message: 'unknown field' }]);
  t.deepEqual(await storedKeys(), []);
});

test.serial('a JSON null body is 400 invalid_request, not an empty change (issue 33)', async (t) => {
  const audited = () => app.db('audit_log').where({ action: 'setting.update' }).pluck('id');
  const before = await audited();
  const res = await request(app.baseUrl, '/api/settings', {
    method: 'PUT',
    cookie,
    headers: { 'content-type': 'application/json' },
    rawBody: 'null',
  });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'invalid_request');
  // Before issue 33 the reader took null for no body: an empty change, answered 200 and audited.
  t.deepEqual(await audited(), before);
});

test.serial(
  'a bad value is 400 invalid_request with details per key; a mix of good and bad changes nothing',
  async (t) => {
    const res = await put({
      'company.name': 'Changed',
      'auth.session_expiry_days': 0,
      'billing.dunning_final_action': 'explode',
    });
    t.is(res.status, 400);
    t.is(res.body.error.code, 'invalid_request');
    t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), [
      'auth.session_expiry_days',
      'billing.dunning_final_action',
    ]);
    t.deepEqual(await storedKeys(), []);
    t.is((await get()).body['company.name'], 'Your Company');
  },
);

test.serial('a dunning schedule out of order or with a day twice is refused, and nothing changes', async (t) => {
  for (const days of [
    [3, 1],
    [1, 1, 2],
  ]) {
    const res = await put({ 'billing.dunning_schedule_days': days });
    t.is(res.status, 400, JSON.stringify(days));
    t.deepEqual(
      res.body.error.details.map((d: { path: string }) => d.path),
      ['billing.dunning_schedule_days'],
    );
  }
  t.deepEqual(await storedKeys(), []);
});

test.serial('values keep their JSON types: a string, boolean or list is not a number', async (t) => {
  for (const value of ['3', true, [5], null, 2.5]) {
    const res = await put({ 'auth.session_expiry_days': value });
    t.is(res.status, 400, JSON.stringify(value));
    t.is(res.body.error.details[0].path, 'auth.session_expiry_days');
  }
  t.is((await put({ 'billing.default_tax_rate': 19 })).status, 400, 'a rate is a decimal string');
  t.is((await put({ 'billing.default_tax_rate': '19.5' })).status, 200);
  t.deepEqual(await storedKeys(), ['billing.default_tax_rate']);
});

test.serial('the realm URL must be http(s)', async (t) => {
  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'not a url']) {
    t.is((await put({ 'auth.idp.realm_url': url })).status, 400, url);
  }
  t.is((await put({ 'auth.idp.realm_url': 'https://sso.example.test/realms/billing' })).status, 200);
  t.is((await put({ 'auth.idp.realm_url': '' })).status, 200, 'empty clears it');
});

test.serial('auth.provider idp without realm URL and client id is refused, so nobody is locked out', async (t) => {
  const alone = await put({ 'auth.provider': 'idp' });
  t.is(alone.status, 400);
  t.is(alone.body.error.details[0].path, 'auth.provider');
  t.deepEqual(await storedKeys(), []);
  const together = await put({
    'auth.provider': 'idp',
    'auth.idp.realm_url': 'https://sso.example.test/realms/b',
    'auth.idp.client_id': 'billing',
  });
  t.is(together.status, 200);
  // Emptying the address while idp is on is refused the same way.
  t.is((await put({ 'auth.idp.realm_url': '' })).status, 400);
  t.is((await put({ 'auth.provider': 'local', 'auth.idp.realm_url': '' })).status, 200);
});

test.serial('the client secret is write-only: "********" when set, and writing the mask keeps the value', async (t) => {
  t.is((await get()).body['auth.idp.client_secret'], '', 'unset reads as empty');
  const set = await put({ 'auth.idp.client_secret': 's3cret-value' });
  t.is(set.body['auth.idp.client_secret'], '********');
  t.false(set.text.includes('s3cret-value'));
  t.is((await get()).body['auth.idp.client_secret'], '********');
  t.is((await put({ 'auth.idp.client_secret': '********', 'company.name': 'Form Co' })).status, 200);
  t.is((await app.db('settings').where({ key: 'auth.idp.client_secret' }).first()).value, 's3cret-value');
});

test.serial('a body that is not an object is 400', async (t) => {
  for (const body of [[], 'text', 5]) {
    const res = await put(body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.code, 'invalid_request');
  }
});

test.serial('an empty PUT changes nothing and answers the settings', async (t) => {
  const res = await put({});
  t.is(res.status, 200);
  t.is(res.body['auth.session_expiry_days'], 7);
});
