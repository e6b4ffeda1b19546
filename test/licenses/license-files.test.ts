/**
 * License files and signing keys (D-100, D-101): the file's exact layout, the verifier in docs/ on fresh,
 * tampered, rotated-out and expired files, the refusals, the JWKS, rotation and its audit row, and the
 * private key kept out of every answer, audit row and log line, and sealed when LICENSE_SIGNING_SECRET is set.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import test from 'ava';
import { SealedSecretError } from '../../src/crypto/envelope.ts';
import { ensureSigningKey, prepareSigningKeys } from '../../src/licenses/signing-keys.ts';
import { loadConfig } from '../../src/config.ts';
import { startHttpServer } from '../../src/web/server.ts';
import { createLogger } from '../../src/logger.ts';
import { startTestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { createTestDatabase } from '../helpers/db.ts';
// @ts-expect-error: the verifier is plain JavaScript for clients, without types.
import { parseLicenseFile, verifyLicenseFile } from '../../docs/verify-license-file.mjs';
import {
  inDays,
  licenseWithDevice,
  startLicenseApp,
  updateLicense,
  validate,
  type License,
  type LicenseKit,
} from './fixtures.ts';

/** A keyring of these keys (crypto/envelope.ts), first seals. */
const ring = (...secrets: string[]) => ({ secrets });

const run = promisify(execFile);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

// Every log line of the shared app, to show no private key is ever logged.
const logLines: string[] = [];
let kit: LicenseKit;
test.before(async () => {
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const app = await startTestApp({ LOG_LEVEL: 'trace' }, { logDestination });
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  kit = {
    app,
    cookie,
    admin: (p, options = {}) => request(app.baseUrl, p, { cookie, ...options }),
    close: () => app.close(),
  };
});
test.after.always(async () => kit?.close());

// Every answer the tests received, to show no private key is ever in one.
const answers: string[] = [];
async function call(p: string, options: Parameters<typeof request>[2] = {}, k = kit) {
  const res = await request(k.app.baseUrl, p, options);
  answers.push(res.text);
  return res;
}
const checkout = (body: unknown, k = kit) => call('/api/licenses/checkout', { body }, k);
const adminCheckout = (key: string, body: unknown = {}, k = kit) =>
  call(`/api/licenses/${encodeURIComponent(key)}/checkout`, { body, cookie: k.cookie }, k);
const jwks = async (k = kit) => (await call('/api/licenses/signing-keys', {}, k)).body;

/** The armoured file's inner JSON and its payload, read without checking anything. */
function unpack(file: string) {
  const lines = file.split('\n');
  const inner = JSON.parse(Buffer.from(lines.slice(1, -2).join(''), 'base64').toString('utf8'));
  return { lines, inner, payload: JSON.parse(Buffer.from(inner.enc, 'base64').toString('utf8')) };
}

function armour(inner: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(inner)).toString('base64');
  return `-----BEGIN LICENSE FILE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END LICENSE FILE-----\n`;
}

async function activatedLicense(body: Record<string, unknown> = {}): Promise<License> {
  return licenseWithDevice(kit, { features: { pro: true, seats: 5 }, ...body });
}

test(
  'a device checkout answers {licenseFile, issuedAt, ' + 'expiresAt} in D-101 layout, valid for 30 days by default',
  async (t) => {
    const license = await activatedLicense({ maxActivations: 3 });
    const res = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
    t.is(res.status, 200, res.text);
    t.deepEqual(Object.keys(res.body).sort(), ['expiresAt', 'issuedAt', 'licenseFile']);
    t.regex(res.body.issuedAt, ISO);
    t.is(Date.parse(res.body.expiresAt) - Date.parse(res.body.issuedAt), 30 * DAY_MS);

    const { lines, inner, payload } = unpack(res.body.licenseFile);
    t.is(lines[0], '-----BEGIN LICENSE FILE-----');
    t.is(lines.at(-2), '-----END LICENSE FILE-----');
    t.is(lines.at(-1), '', 'ends with a newline');
    const body = lines.slice(1, -2);
    t.true(
      body.slice(0, -1).every((l) => l.length === 64),
      'lines of 64',
    );
    t.true(body.at(-1)!.length >= 1 && body.at(-1)!.length <= 64);
    t.deepEqual(Object.keys(inner).sort(), ['alg', 'enc', 'kid', 'sig']);
    t.is(inner.alg, 'base64+ed25519');
    t.deepEqual((await jwks()).keys.map((k: { kid: string }) => k.kid).includes(inner.kid), true);
    t.deepEqual(payload, {
      license: {
        id: license.id,
        licenseKey: license.licenseKey,
        customerId: license.customerId,
        productId: license.productId,
        status: 'active',
        features: { pro: true, seats: 5 },
        maxActivations: 3,
        expiresAt: null,
      },
      deviceId: 'known-device',
      issuedAt: res.body.issuedAt,
      expiresAt: res.body.expiresAt,
    });
    // A checkout reads: it registers and refreshes nothing.
    t.is((await kit.admin(`/api/licenses/${license.licenseKey}`)).body.currentActivations, 1);
  },
);

test('the verifier in docs/ accepts a fresh file and refuses one with a character of enc changed', async (t) => {
  const license = await activatedLicense();
  const { licenseFile } = (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).body;
  const keys = await jwks();
  const fresh = verifyLicenseFile(licenseFile, keys);
  t.true(fresh.valid, JSON.stringify(fresh));
  t.is(fresh.payload.license.licenseKey, license.licenseKey);

  const { inner } = unpack(licenseFile);
  const at = 20;
  const changed = inner.enc[at] === 'A' ? 'B' : 'A';
  const tampered = armour({ ...inner, enc: inner.enc.slice(0, at) + changed + inner.enc.slice(at + 1) });
  t.deepEqual(verifyLicenseFile(tampered, keys), { valid: false, reason: 'bad_signature', kid: inner.kid });
  // A signature copied under another kid does not pass either.
  t.is(verifyLicenseFile(armour({ ...inner, kid: 'unknown' }), keys).reason, 'unknown_kid');
  t.is(verifyLicenseFile('not a license file', keys).reason, 'malformed');

  // As a command line: exit status 0 for the fresh file, 1 for the tampered one.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'license-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'fresh.lic'), licenseFile);
  writeFileSync(path.join(dir, 'tampered.lic'), tampered);
  writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify(keys));
  const verifier = path.resolve('docs/verify-license-file.mjs');
  const ok = await run(process.execPath, [verifier, path.join(dir, 'fresh.lic'), path.join(dir, 'jwks.json')]);
  t.true(JSON.parse(ok.stdout).valid);
  const refused = await run(process.execPath, [
    verifier,
    path.join(dir, 'tampered.lic'),
    path.join(dir, 'jwks.json'),
  ]).catch((e) => e);
  t.is(refused.code, 1);
  t.is(JSON.parse(refused.stdout).reason, 'bad_signature');
});

test('an expired file is refused by the verifier; the file never outlives its license', async (t) => {
  const license = await activatedLicense({ expiresAt: inDays(2) });
  const res = await adminCheckout(license.licenseKey, { ttlSeconds: 3600 });
  t.is(res.status, 200, res.text);
  t.is(Date.parse(res.body.expiresAt) - Date.parse(res.body.issuedAt), 3600_000);
  const keys = await jwks();
  t.true(verifyLicenseFile(res.body.licenseFile, keys, { now: new Date(Date.parse(res.body.expiresAt) - 1) }).valid);
  const expired = verifyLicenseFile(res.body.licenseFile, keys, { now: new Date(Date.parse(res.body.expiresAt)) });
  t.false(expired.valid);
  t.is(expired.reason, 'expired');

  // 30 days asked, 2 days of license left: the file ends with the license.
  const capped = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device', ttlSeconds: 30 * 86_400 });
  t.is(capped.body.expiresAt, (await kit.admin(`/api/licenses/${license.licenseKey}`)).body.expiresAt);
});

test(
  'ttlSeconds is honoured from 3600 to 31536000; ' + 'outside, not an integer or not a number is 400 naming it',
  async (t) => {
    const license = await activatedLicense();
    for (const ttlSeconds of [3600, 31_536_000]) {
      const res = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device', ttlSeconds });
      t.is(res.status, 200, res.text);
      t.is(Date.parse(res.body.expiresAt) - Date.parse(res.body.issuedAt), ttlSeconds * 1000);
    }
    for (const ttlSeconds of [3599, 31_536_001, 0, -3600, 3600.5, '3600', null]) {
      const device = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device', ttlSeconds });
      t.is(device.status, 400, `${ttlSeconds}`);
      t.deepEqual(
        device.body.error.details.map((d: { path: string }) => d.path),
        ['ttlSeconds'],
      );
      const admin = await adminCheckout(license.licenseKey, { ttlSeconds });
      t.is(admin.status, 400, `admin ${ttlSeconds}`);
      t.is(admin.body.error.code, 'invalid_request');
    }
  },
);

test('the setting licenses.file_ttl_days is the default TTL', async (t) => {
  const kitB = await startLicenseApp();
  t.teardown(() => kitB.close());
  t.is((await kitB.admin('/api/settings', { method: 'PUT', body: { 'licenses.file_ttl_days': 7 } })).status, 200);
  const license = await licenseWithDevice(kitB);
  const res = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' }, kitB);
  t.is(res.status, 200, res.text);
  t.is(Date.parse(res.body.expiresAt) - Date.parse(res.body.issuedAt), 7 * DAY_MS);
});

test('unknown fields are refused on both checkouts', async (t) => {
  const license = await activatedLicense();
  const device = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device', deviceName: 'x' });
  t.is(device.status, 400);
  t.is(device.body.error.code, 'invalid_request');
  const admin = await adminCheckout(license.licenseKey, { device: 'known-device' });
  t.is(admin.status, 400);
  t.is(admin.body.error.code, 'invalid_request');
});

test(
  'a device not activated on the license is 409 device_not_activated; an unknown key is 404 license_not_found (the ' +
    'code of D-34; not_found on the admin path)',
  async (t) => {
    const license = await activatedLicense();
    const other = await activatedLicense();
    for (const deviceId of ['never-seen', 'known-device ']) {
      const res = await checkout({ licenseKey: license.licenseKey, deviceId });
      t.is(res.status, 409, deviceId);
      t.is(res.body.error.code, 'device_not_activated');
    }
    // Activated on another license is not activated on this one.
    t.is((await validate(kit, other.licenseKey, 'other-device')).status, 200);
    t.is(
      (await checkout({ licenseKey: license.licenseKey, deviceId: 'other-device' })).body.error.code,
      'device_not_activated',
    );
    for (const licenseKey of ['LIC-0000-0000-0000', 'not-a-key']) {
      const res = await checkout({ licenseKey, deviceId: 'known-device' });
      t.is(res.status, 404, licenseKey);
      t.is(res.body.error.code, 'license_not_found');
    }
    t.is((await adminCheckout('LIC-0000-0000-0000')).status, 404);
  },
);

test('a dead device (D-102: silent past twice the interval) gets no file until it validates again', async (t) => {
  const license = await activatedLicense({ heartbeatIntervalSeconds: 60 });
  t.is((await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).status, 200, 'live: a file');
  await kit.app
    .db('license_activations')
    .where({ device_id: 'known-device' })
    .whereIn('license_id', kit.app.db('licenses').select('id').where({ license_key: license.licenseKey }))
    .update({ last_seen_at: kit.app.db.raw(`now() - interval '121 seconds'`) });
  const dead = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
  t.is(dead.status, 409);
  t.is(dead.body.error.code, 'device_not_activated');
  t.is((await validate(kit, license.licenseKey, 'known-device')).status, 200);
  t.is(
    (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).status,
    200,
    'validated again: a file',
  );
});

test('suspended, revoked and expired licenses are refused with D-34 codes on both checkouts', async (t) => {
  const cases: [string, (l: License) => Promise<unknown>][] = [
    ['license_suspended', (l) => updateLicense(kit, l.licenseKey, { status: 'suspended' })],
    ['license_revoked', (l) => updateLicense(kit, l.licenseKey, { status: 'revoked' })],
    [
      'license_expired',
      (l) =>
        kit.app
          .db('licenses')
          .where({ id: l.id })
          .update({ expires_at: new Date(Date.now() - 1000) }),
    ],
    ['license_expired', (l) => kit.app.db('licenses').where({ id: l.id }).update({ status: 'expired' })],
  ];
  for (const [code, makeInactive] of cases) {
    const license = await activatedLicense();
    await makeInactive(license);
    const device = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
    t.is(device.status, 409, code);
    t.is(device.body.error.code, code);
    // Status before device: a device not activated on a suspended license hears about the license.
    t.is((await checkout({ licenseKey: license.licenseKey, deviceId: 'stranger' })).body.error.code, code);
    const admin = await adminCheckout(license.licenseKey, { deviceId: 'known-device' });
    t.is(admin.status, 409, `admin ${code}`);
    t.is(admin.body.error.code, code);
    t.is(
      (await kit.app.db('audit_log').where({ action: 'license.checkout', target_id: license.licenseKey })).length,
      0,
      'a refused checkout leaves no audit row',
    );
  }
});

test(
  'an admin checks out a file with or without a device, ' + 'active or not on the license, with one audit row each',
  async (t) => {
    const license = await activatedLicense();
    const keys = await jwks();
    for (const body of [{}, { deviceId: 'air-gapped-host' }, { deviceId: 'known-device', ttlSeconds: 7200 }]) {
      const res = await adminCheckout(license.licenseKey, body);
      t.is(res.status, 200, res.text);
      const result = verifyLicenseFile(res.body.licenseFile, keys);
      t.true(result.valid);
      t.is(result.payload.deviceId, (body as { deviceId?: string }).deviceId ?? null);
    }
    const rows = await kit.app
      .db('audit_log')
      .where({ action: 'license.checkout', target_id: license.licenseKey })
      .orderBy('created_at');
    t.is(rows.length, 3);
    t.is(rows[0].after.deviceId ?? null, null, 'no device named');
    t.is(rows[1].after.deviceId, 'air-gapped-host');
    t.deepEqual(Object.keys(rows[2].after).sort(), ['deviceId', 'expiresAt', 'issuedAt', 'kid']);
    // Admin routes need the admin session.
    t.is((await request(kit.app.baseUrl, `/api/licenses/${license.licenseKey}/checkout`, { body: {} })).status, 401);
  },
);

test.serial(
  'the JWKS lists every key as D-100 says; rotation makes a new current key, audited once, and old files still verify',
  async (t) => {
    const license = await activatedLicense();
    const before = (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).body.licenseFile;
    const oldKid = unpack(before).inner.kid;
    const first = await jwks();
    for (const key of first.keys) {
      t.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      t.like(key, { kty: 'OKP', crv: 'Ed25519', use: 'sig', alg: 'EdDSA' });
      t.is(Buffer.from(key.x, 'base64url').length, 32);
      t.regex(key.x, /^[A-Za-z0-9_-]{43}$/);
    }
    t.is((await call('/api/licenses/signing-keys')).headers.get('cache-control'), 'public, max-age=300');

    t.is((await request(kit.app.baseUrl, '/api/licenses/signing-keys/rotate', { method: 'POST' })).status, 401);
    const rotated = await call('/api/licenses/signing-keys/rotate', { method: 'POST', cookie: kit.cookie });
    t.is(rotated.status, 201, rotated.text);
    t.deepEqual(Object.keys(rotated.body).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    t.not(rotated.body.kid, oldKid);
    const audit = await kit.app.db('audit_log').where({ action: 'license_signing_key.rotate' });
    t.is(audit.length, 1);
    t.like(audit[0], { target_type: 'license_signing_key', target_id: rotated.body.kid });
    t.deepEqual(audit[0].before, { currentKid: oldKid });
    t.deepEqual(audit[0].after, { currentKid: rotated.body.kid });

    const second = await jwks();
    t.deepEqual(
      second.keys.map((k: { kid: string }) => k.kid),
      [...first.keys.map((k: { kid: string }) => k.kid), rotated.body.kid],
    );
    // The file signed by the rotated-out key still verifies; new files use the new key.
    const old = verifyLicenseFile(before, second);
    t.true(old.valid);
    t.is(old.kid, oldKid);
    const after = (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).body.licenseFile;
    t.is(parseLicenseFile(after).kid, rotated.body.kid);
    t.true(verifyLicenseFile(after, second).valid);
    // A client holding only the old JWKS meets a kid it does not know (and fetches the JWKS again).
    t.is(verifyLicenseFile(after, first).reason, 'unknown_kid');
  },
);

test.serial('the private key is never in an answer, an audit row or a log line', async (t) => {
  const license = await activatedLicense();
  await adminCheckout(license.licenseKey, {});
  await call('/api/licenses/signing-keys/rotate', { method: 'POST', cookie: kit.cookie });
  await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
  const rows = await kit.app.db('license_signing_keys').select('*');
  t.true(rows.length >= 2);
  const secrets = rows.flatMap((row) => {
    t.is(row.private_key_encryption, 'none', 'no LICENSE_SIGNING_SECRET here');
    const pem = row.private_key as string;
    const der = pem
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join('');
    return [der, createPrivateKey(pem).export({ format: 'jwk' }).d!];
  });
  const audit = JSON.stringify(await kit.app.db('audit_log').select('*'));
  for (const secret of secrets) {
    t.false(
      answers.some((a) => a.includes(secret)),
      'in an answer',
    );
    t.false(audit.includes(secret), 'in an audit row');
    t.false(
      logLines.some((l) => l.includes(secret)),
      'in a log line',
    );
  }
  t.true(logLines.length > 0, 'the log was captured');
});

test('with LICENSE_SIGNING_SECRET the private key is stored sealed, not as a PEM, and files verify', async (t) => {
  const sealed = await startLicenseApp({ LICENSE_SIGNING_SECRET: 'correct horse battery staple' });
  t.teardown(() => sealed.close());
  const license = await licenseWithDevice(sealed);
  const res = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' }, sealed);
  t.is(res.status, 200, res.text);
  const [row] = await sealed.app.db('license_signing_keys').select('*');
  t.is(row.private_key_encryption, 'scrypt-aes-256-gcm');
  t.notRegex(row.private_key, /BEGIN|PRIVATE KEY/);
  t.throws(() => createPrivateKey(row.private_key));
  t.regex(row.private_key, /^v2(\.[A-Za-z0-9_-]+){4}$/);
  t.true(verifyLicenseFile(res.body.licenseFile, await jwks(sealed)).valid);
  // Rotation seals the new key too.
  t.is(
    (await call('/api/licenses/signing-keys/rotate', { method: 'POST', cookie: sealed.cookie }, sealed)).status,
    201,
  );
  t.deepEqual(
    (await sealed.app.db('license_signing_keys').select('private_key_encryption')).map((r) => r.private_key_encryption),
    ['scrypt-aes-256-gcm', 'scrypt-aes-256-gcm'],
  );
});

test(
  'release: a key stored unencrypted is sealed when the secret is set, a changed secret needs the old one beside ' +
    'it, a wrong one fails naming the variable',
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    const db = database.knex;
    // Two releases at once create one key.
    await Promise.all(Array.from({ length: 8 }, () => ensureSigningKey(db, ring())));
    t.is((await db('license_signing_keys').select('kid')).length, 1);
    t.deepEqual(await prepareSigningKeys(db, ring()), []);

    // Unencrypted, then the secret is set: release seals it.
    const kid = (await db('license_signing_keys').first('kid')).kid;
    t.deepEqual(await prepareSigningKeys(db, ring('first secret')), [kid]);
    t.is((await db('license_signing_keys').first()).private_key_encryption, 'scrypt-aes-256-gcm');
    t.deepEqual(await prepareSigningKeys(db, ring('first secret')), [], 'sealed with the first secret: nothing to do');

    // Without the secret, or with another one, release fails with one line naming the variable.
    for (const secrets of [[], ['mistyped secret']]) {
      const error = await t.throwsAsync(prepareSigningKeys(db, ring(...secrets)), { instanceOf: SealedSecretError });
      t.regex(error!.message, /ENCRYPTION_KEY/);
      t.false(error!.message.includes('\n'));
    }
    // Changing the secret: new,old re-seals with the new one, which then suffices alone.
    t.deepEqual(await prepareSigningKeys(db, ring('second secret', 'first secret')), [kid]);
    t.deepEqual(await prepareSigningKeys(db, ring('second secret')), []);
  },
);

test(
  'a web process refuses to sign with a key stored unencrypted while the secret is set (internal_error, logged), ' +
    'until the release step seals it',
  async (t) => {
    const plain = await startLicenseApp();
    t.teardown(() => plain.close());
    const license = await licenseWithDevice(plain);
    t.is((await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' }, plain)).status, 200);
    // Another process on the same database, configured with a secret.
    const config = loadConfig({
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'error',
      DATABASE_URL: plain.app.database.url,
      LICENSE_SIGNING_SECRET: 'now set',
    });
    const errors: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        errors.push(String(chunk));
        done();
      },
    });
    const server = await startHttpServer(
      { db: plain.app.db, config, logger: createLogger(config, 'test', destination) },
      0,
      '127.0.0.1',
    );
    t.teardown(() => server.close());
    const withSecret = { baseUrl: `http://127.0.0.1:${server.port}` };
    const refused = await request(withSecret.baseUrl, '/api/licenses/checkout', {
      body: { licenseKey: license.licenseKey, deviceId: 'known-device' },
    });
    t.is(refused.status, 500);
    t.is(refused.body.error.code, 'internal_error');
    t.false(refused.text.includes('ENCRYPTION_KEY'), 'the caller is not told the set-up');
    t.true(
      errors.some((line) => line.includes('stored unencrypted while ENCRYPTION_KEY is set: run the release step')),
      errors.join(''),
    );
    await prepareSigningKeys(plain.app.db, ring('now set'));
    const signed = await request(withSecret.baseUrl, '/api/licenses/checkout', {
      body: { licenseKey: license.licenseKey, deviceId: 'known-device' },
    });
    t.is(signed.status, 200, signed.text);
    t.true(verifyLicenseFile(signed.body.licenseFile, await jwks(plain)).valid);
  },
);

test('concurrent rotations leave exactly one current key and every key published', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const { rotateSigningKey } = await import('../../src/licenses/signing-keys.ts');
  await ensureSigningKey(database.knex, ring());
  await Promise.all(Array.from({ length: 5 }, () => rotateSigningKey(database.knex, ring(), { type: 'system' })));
  const rows = await database.knex('license_signing_keys').select('kid', 'rotated_at');
  t.is(rows.length, 6);
  t.is(rows.filter((r) => r.rotated_at === null).length, 1);
  t.is(
    Number(
      (
        await database
          .knex('audit_log')
          .where({ action: 'license_signing_key.rotate' })
          .count<{ count: string }[]>('* as count')
      )[0]!.count,
    ),
    5,
  );
});

test('the public checkout counts against the public license rate limit with verify and validate', async (t) => {
  const limited = await startLicenseApp();
  t.teardown(() => limited.close());
  t.is(
    (await limited.admin('/api/settings', { method: 'PUT', body: { 'licenses.rate_limit_per_minute': 4 } })).status,
    200,
  );
  const license = await licenseWithDevice(limited); // one validate
  t.is(
    (await request(limited.app.baseUrl, '/api/licenses/verify', { body: { licenseKey: license.licenseKey } })).status,
    200,
  );
  for (let i = 0; i < 2; i++)
    t.is((await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' }, limited)).status, 200);
  const refused = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' }, limited);
  t.is(refused.status, 429);
  t.is(refused.body.error.code, 'rate_limited');
  t.is(
    (await request(limited.app.baseUrl, '/api/licenses/verify', { body: { licenseKey: license.licenseKey } })).status,
    429,
  );
  // The admin checkout is not behind it.
  t.is((await adminCheckout(license.licenseKey, {}, limited)).status, 200);
});
