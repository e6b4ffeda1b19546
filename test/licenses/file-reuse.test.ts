/**
 * A device checking out again within seconds gets the file signed moments ago (src/licenses/file-reuse.ts, issue
 * 20): only the signature is saved. Everything the checkout decides is decided again: a revoked license, a device
 * no longer activated, changed license fields, another TTL, another device or a rotated key never get a kept file.
 */
import test from 'ava';
// @ts-expect-error: the verifier is plain JavaScript for clients, without types.
import { parseLicenseFile, verifyLicenseFile } from '../../docs/verify-license-file.mjs';
import { keepFile, REUSE_MS, reusableFile, reuseKey } from '../../src/licenses/file-reuse.ts';
import { request } from '../helpers/http.ts';
import { licenseWithDevice, startLicenseApp, updateLicense, validate, type LicenseKit } from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const checkout = (body: Record<string, unknown>) => request(kit.app.baseUrl, '/api/licenses/checkout', { body });
const jwks = async () => (await request(kit.app.baseUrl, '/api/licenses/signing-keys')).body;

/** The payload a file carries (read without checking the signature). */
function payloadOf(file: string): Record<string, any> {
  const inner = JSON.parse(Buffer.from(file.split('\n').slice(1, -2).join(''), 'base64').toString('utf8'));
  return JSON.parse(Buffer.from(inner.enc, 'base64').toString('utf8'));
}

test.serial('a second checkout within seconds answers the same signed file; another TTL, device or license content gets its own', async (t) => {
  const license = await licenseWithDevice(kit);
  t.is((await validate(kit, license.licenseKey, 'second-device')).body.valid, true);
  const first = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
  t.is(first.status, 200, first.text);
  const again = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
  t.deepEqual(again.body, first.body, 'the kept file, its issuedAt and expiresAt');
  t.true(verifyLicenseFile(again.body.licenseFile, await jwks()).valid);

  const otherTtl = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device', ttlSeconds: 3600 });
  t.not(otherTtl.body.licenseFile, first.body.licenseFile);
  t.is(Date.parse(otherTtl.body.expiresAt) - Date.parse(otherTtl.body.issuedAt), 3600_000);
  const otherDevice = await checkout({ licenseKey: license.licenseKey, deviceId: 'second-device' });
  t.is(payloadOf(otherDevice.body.licenseFile).deviceId, 'second-device');

  await updateLicense(kit, license.licenseKey, { features: { pro: true, seats: 9 } });
  const changed = await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' });
  t.deepEqual(payloadOf(changed.body.licenseFile).license.features, { pro: true, seats: 9 });
  t.true(verifyLicenseFile(changed.body.licenseFile, await jwks()).valid);
});

test.serial('a kept file never answers for a revoked license or a device no longer activated', async (t) => {
  const revoked = await licenseWithDevice(kit);
  t.is((await checkout({ licenseKey: revoked.licenseKey, deviceId: 'known-device' })).status, 200);
  await updateLicense(kit, revoked.licenseKey, { status: 'revoked' });
  const refused = await checkout({ licenseKey: revoked.licenseKey, deviceId: 'known-device' });
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'license_revoked');

  const removed = await licenseWithDevice(kit);
  t.is((await checkout({ licenseKey: removed.licenseKey, deviceId: 'known-device' })).status, 200);
  await kit.app.db('license_activations').where({ license_id: removed.id }).delete();
  const notActivated = await checkout({ licenseKey: removed.licenseKey, deviceId: 'known-device' });
  t.is(notActivated.status, 409);
  t.is(notActivated.body.error.code, 'device_not_activated');
});

test.serial('after a rotation the next checkout is signed by the new key, not answered from the old one', async (t) => {
  const license = await licenseWithDevice(kit);
  const before = (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).body.licenseFile;
  const rotated = await kit.admin('/api/licenses/signing-keys/rotate', { method: 'POST' });
  t.is(rotated.status, 201, rotated.text);
  const after = (await checkout({ licenseKey: license.licenseKey, deviceId: 'known-device' })).body.licenseFile;
  t.not(parseLicenseFile(after).kid, parseLicenseFile(before).kid);
  t.is(parseLicenseFile(after).kid, rotated.body.kid);
});

test('a kept file answers only while it is younger than REUSE_MS by the checkout clock, and only to its owner', (t) => {
  const owner = {};
  const issuedAt = new Date('2026-11-25T10:00:00.000Z');
  const file = { licenseFile: 'file', issuedAt, expiresAt: new Date(issuedAt.getTime() + 3600_000), kid: 'kid' };
  const key = reuseKey('kid', 3600, 'device', { id: 'license' });
  keepFile(owner, key, file);
  t.is(reusableFile(owner, key, new Date(issuedAt.getTime() + REUSE_MS - 1)), file);
  t.is(reusableFile({}, key, issuedAt), undefined, 'another app keeps its own files');
  t.is(reusableFile(owner, reuseKey('kid', 3600, 'other device', { id: 'license' }), issuedAt), undefined);
  // A clock behind the file's issue time is not trusted either.
  t.is(reusableFile(owner, key, new Date(issuedAt.getTime() - 1)), undefined);
  keepFile(owner, key, file);
  t.is(reusableFile(owner, key, new Date(issuedAt.getTime() + REUSE_MS)), undefined);
  t.is(reusableFile(owner, key, issuedAt), undefined, 'an expired file is forgotten');
});
