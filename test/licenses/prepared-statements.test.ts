/**
 * A release migrates while the old processes still serve: the license paths and the admin session check must
 * keep answering, with the same fields, after a migration adds columns to the tables they read (a statement
 * prepared on a connection before it is replanned by PostgreSQL, and refused if its result columns would change).
 */
import test from 'ava';
import { request } from '../helpers/http.ts';
import { issueLicense, startLicenseApp, validate, verify, type LicenseKit } from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

/** More calls at once than the pool has connections, so every connection prepares the statements. */
async function everyHotPath(licenseKey: string, round: string) {
  const calls = Array.from({ length: 24 }, (_, i) => [
    verify(kit, licenseKey),
    validate(kit, licenseKey, 'known-device'),
    validate(kit, licenseKey, `new-device-${round}-${i}`),
    request(kit.app.baseUrl, '/api/licenses/checkout', { body: { licenseKey, deviceId: 'known-device' } }),
    kit.admin('/api/licenses?limit=1'),
  ]);
  return Promise.all(calls.flat());
}

/** As many heartbeats at once (D-102), each answered 200 for the known device. */
async function heartbeats(licenseKey: string) {
  return Promise.all(
    Array.from({ length: 24 }, () =>
      request(kit.app.baseUrl, '/api/licenses/heartbeat', { body: { licenseKey, deviceId: 'known-device' } }),
    ),
  );
}

test('statements prepared before a migration that adds columns still answer after it', async (t) => {
  const license = await issueLicense(kit, { maxActivations: null });
  t.is((await validate(kit, license.licenseKey, 'known-device')).status, 200);
  for (const res of await everyHotPath(license.licenseKey, 'before')) t.is(res.status, 200, res.text);
  for (const res of await heartbeats(license.licenseKey)) t.is(res.status, 200, res.text);

  await kit.app.db.raw(`
    alter table licenses add column migrated_note text;
    alter table license_activations add column migrated_note text;
    alter table sessions add column migrated_note text;
    alter table users add column migrated_note text;
    alter table license_signing_keys add column migrated_note text`);

  const after = await everyHotPath(license.licenseKey, 'after');
  for (const res of await heartbeats(license.licenseKey)) t.is(res.status, 200, res.text);
  for (const res of after) t.is(res.status, 200, res.text);
  const verified = after[0]!.body;
  t.like(verified, { valid: true, status: 'active' });
  t.false('migrated_note' in verified);
  const lastNew = after.at(-3)!.body;
  t.like(lastNew, { valid: true, maxActivations: null });
  t.is(Number((await kit.app.db('license_activations').where({ license_id: license.id }).count({ n: '*' }))[0]!.n), 49);
});
