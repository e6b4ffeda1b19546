/**
 * The public endpoints POST /api/licenses/verify and /validate (D-33, D-34): their exact bodies, the
 * not-found answer, and bad input, each answered as documented with nothing changed.
 */
import test from 'ava';
import { request } from '../helpers/http.ts';
import {
  activationRows,
  getLicense,
  inDays,
  issueLicense,
  startLicenseApp,
  tableCounts,
  validate,
  verify,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const NOT_FOUND = { valid: false, error: 'license_not_found' };
// Tests that compare whole-table counts are serial: ava runs them before the concurrent ones.
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('verify answers exactly {valid, status, features, expiresAt} and registers no device', async (t) => {
  const expiresAt = inDays(30);
  const features = { pro: true, seats: 10, modules: ['export', 'sync'] };
  const license = await issueLicense(kit, { features, expiresAt, maxActivations: 3 });
  const res = await verify(kit, license.licenseKey);
  t.is(res.status, 200);
  t.deepEqual(res.body, { valid: true, status: 'active', features, expiresAt });
  t.is(await activationRows(kit.app.db, license.id), 0);
});

test('validate success answers the D-34 body and registers the device', async (t) => {
  const license = await issueLicense(kit, { features: { tier: ['gold'] }, maxActivations: 3 });
  const res = await validate(kit, license.licenseKey, 'hw-fingerprint-1', 'Ada’s MacBook');
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body).sort(), [
    'activation',
    'currentActivations',
    'expiresAt',
    'features',
    'maxActivations',
    'status',
    'valid',
  ]);
  t.like(res.body, {
    valid: true,
    status: 'active',
    features: { tier: ['gold'] },
    expiresAt: null,
    maxActivations: 3,
    currentActivations: 1,
  });
  t.deepEqual(Object.keys(res.body.activation).sort(), ['activatedAt', 'deviceId', 'deviceName', 'lastSeenAt']);
  t.like(res.body.activation, { deviceId: 'hw-fingerprint-1', deviceName: 'Ada’s MacBook' });
  t.regex(res.body.activation.activatedAt, ISO);
  t.regex(res.body.activation.lastSeenAt, ISO);
  t.is(await activationRows(kit.app.db, license.id), 1);
});

test.serial(
  'an unknown key is 404 with exactly {"valid": false, "error": "license_not_found"} on verify and validate',
  async (t) => {
    const before = await tableCounts(kit.app.db);
    const v = await verify(kit, 'LIC-0000-0000-0000');
    t.is(v.status, 404);
    t.deepEqual(v.body, NOT_FOUND);
    const val = await validate(kit, 'LIC-0000-0000-0000', 'device');
    t.is(val.status, 404);
    t.deepEqual(val.body, NOT_FOUND);
    t.deepEqual(await tableCounts(kit.app.db), before);
  },
);

test.serial('malformed key strings are unknown keys: 404 license_not_found, nothing changed', async (t) => {
  const license = await issueLicense(kit);
  const before = await tableCounts(kit.app.db);
  const malformed = [
    'not-a-key',
    'LIC',
    'LIC-0000',
    'LIC-0000-0000',
    'LIC-0000-0000-0000-0000',
    `${license.licenseKey}X`,
    license.licenseKey.replaceAll('-', ''),
    'LIC-IIII-LLLL-OOOO',
    'LIC-UUUU-0000-0000',
    "' or 1=1 --",
    '%',
    '_',
    'LIC-____-____-____',
    'LIC-%%%%-%%%%-%%%%',
    'ЛИЦ-0000-0000-0000',
    '\u0000',
    `${license.licenseKey.slice(0, -1)}*`,
  ];
  for (const key of malformed) {
    const v = await verify(kit, key);
    t.is(v.status, 404, key);
    t.deepEqual(v.body, NOT_FOUND, key);
    const val = await validate(kit, key, 'device');
    t.is(val.status, 404, key);
    t.deepEqual(val.body, NOT_FOUND, key);
  }
  t.deepEqual(await tableCounts(kit.app.db), before);
});

test.serial('a licenseKey of the wrong type, blank or missing is 400 invalid_request naming licenseKey', async (t) => {
  const before = await tableCounts(kit.app.db);
  for (const licenseKey of [5, null, true, ['LIC-0000-0000-0000'], { key: 'x' }, '', '   ', 'L'.repeat(101)]) {
    for (const [path, device] of [
      ['/api/licenses/verify', {}],
      ['/api/licenses/validate', { deviceId: 'd', deviceName: 'n' }],
    ] as const) {
      const res = await request(kit.app.baseUrl, path, { body: { licenseKey, ...device } });
      t.is(res.status, 400, `${path} ${JSON.stringify(licenseKey)}`);
      t.is(res.body.error.code, 'invalid_request');
      t.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path),
        ['licenseKey'],
        JSON.stringify(licenseKey),
      );
    }
  }
  const missing = await request(kit.app.baseUrl, '/api/licenses/verify', { body: {} });
  t.is(missing.status, 400);
  t.deepEqual(
    missing.body.error.details.map((d: { path: string }) => d.path),
    ['licenseKey'],
  );
  t.deepEqual(await tableCounts(kit.app.db), before);
});

test.serial(
  'validate without deviceId, or with a deviceId or deviceName over 256 characters, is 400 and activates nothing',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 10 });
    const key = license.licenseKey;
    const cases: [Record<string, unknown>, string[]][] = [
      [{ licenseKey: key, deviceName: 'n' }, ['deviceId']],
      [{ licenseKey: key, deviceId: 'd' }, ['deviceName']],
      [{ licenseKey: key }, ['deviceId', 'deviceName']],
      [{ licenseKey: key, deviceId: '', deviceName: 'n' }, ['deviceId']],
      [{ licenseKey: key, deviceId: 'd', deviceName: '' }, ['deviceName']],
      [{ licenseKey: key, deviceId: 'x'.repeat(257), deviceName: 'n' }, ['deviceId']],
      [{ licenseKey: key, deviceId: 'x'.repeat(300), deviceName: 'n' }, ['deviceId']],
      [{ licenseKey: key, deviceId: 'd', deviceName: 'n'.repeat(257) }, ['deviceName']],
      [{ licenseKey: key, deviceId: 'd', deviceName: 'n'.repeat(300) }, ['deviceName']],
      [{ licenseKey: key, deviceId: 12345, deviceName: 'n' }, ['deviceId']],
      [{ licenseKey: key, deviceId: 'd', deviceName: { first: 'x' } }, ['deviceName']],
      [{ licenseKey: 5, deviceId: 'x'.repeat(300), deviceName: null }, ['deviceId', 'deviceName', 'licenseKey']],
    ];
    const before = await tableCounts(kit.app.db);
    for (const [body, paths] of cases) {
      const res = await request(kit.app.baseUrl, '/api/licenses/validate', { body });
      t.is(res.status, 400, JSON.stringify(body).slice(0, 80));
      t.is(res.body.error.code, 'invalid_request');
      t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), paths);
    }
    t.deepEqual(await tableCounts(kit.app.db), before);
    t.is((await getLicense(kit, key)).currentActivations, 0);
  },
);

test('device id and name of exactly 256 characters are accepted (the boundary)', async (t) => {
  const license = await issueLicense(kit);
  const res = await validate(kit, license.licenseKey, 'i'.repeat(256), 'n'.repeat(256));
  t.like(res.body, { valid: true, activation: { deviceId: 'i'.repeat(256), deviceName: 'n'.repeat(256) } });
  // Characters, not bytes: 256 two-byte characters fit.
  t.is((await validate(kit, license.licenseKey, 'é'.repeat(256), 'ü'.repeat(256))).status, 200);
});

test.serial('a body that is not JSON is 415, malformed JSON is 400; nothing changes', async (t) => {
  const before = await tableCounts(kit.app.db);
  const text = await request(kit.app.baseUrl, '/api/licenses/validate', {
    rawBody: 'licenseKey=LIC-0000-0000-0000',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(text.status, 415);
  t.is(text.body.error.code, 'unsupported_media_type');
  const broken = await request(kit.app.baseUrl, '/api/licenses/verify', {
    rawBody: '{"licenseKey": ',
    headers: { 'content-type': 'application/json' },
  });
  t.is(broken.status, 400);
  t.is(broken.body.error.code, 'invalid_request');
  t.deepEqual(await tableCounts(kit.app.db), before);
});

test('the public endpoints need no credentials and ignore a bogus cookie or bearer', async (t) => {
  const license = await issueLicense(kit);
  const res = await request(kit.app.baseUrl, '/api/licenses/verify', {
    body: { licenseKey: license.licenseKey },
    cookie: 'session=garbage',
    bearer: 'bsk_garbage',
  });
  t.is(res.status, 200);
  t.true(res.body.valid);
});

test('only POST is routed: GET /api/licenses/verify is not a license check', async (t) => {
  const res = await request(kit.app.baseUrl, '/api/licenses/verify');
  t.is(res.status, 401, 'GET /api/licenses/:key is the admin read, which needs a session');
});
