/**
 * License status (D-32, D-34): every refusal of verify and validate, revoked is final, an expiry date in
 * the past reads `expired` at once, a later date renews, and no status but active ever activates a device.
 */
import test from 'ava';
import { expireLicenses } from '../../src/licenses/expiry.ts';
import {
  activationRows,
  assertRefused,
  getLicense,
  inDays,
  issueLicense,
  licenseWithDevice,
  startLicenseApp,
  updateLicense,
  validate,
  verify,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

test('an active license verifies valid and validates (the control for the refusals)', async (t) => {
  const license = await licenseWithDevice(kit);
  t.deepEqual((await verify(kit, license.licenseKey)).body, {
    valid: true,
    status: 'active',
    features: { pro: true },
    expiresAt: null,
  });
  t.like((await validate(kit, license.licenseKey, 'known-device')).body, { valid: true, status: 'active' });
});

test('suspended: verify valid false, validate license_suspended; active again validates', async (t) => {
  const license = await licenseWithDevice(kit);
  t.is((await updateLicense(kit, license.licenseKey, { status: 'suspended' })).status, 'suspended');
  await assertRefused(t, kit, license, 'suspended', 'license_suspended');
  t.is((await updateLicense(kit, license.licenseKey, { status: 'active' })).status, 'active');
  t.like((await validate(kit, license.licenseKey, 'new-device')).body, { valid: true, currentActivations: 2 });
});

test('expired by date at creation: expired everywhere at once, without any sweep', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 5, expiresAt: inDays(-1) });
  t.is(license.status, 'expired');
  t.is(
    (await kit.app.db('licenses').where({ id: license.id }).first()).status,
    'active',
    'stored status untouched: no sweep ran',
  );
  await assertRefused(t, kit, license, 'expired', 'license_expired');
});

test('PUT of a past expiresAt expires the license at once, for known devices too', async (t) => {
  const license = await licenseWithDevice(kit);
  const past = new Date(Date.now() - 1000).toISOString();
  const updated = await updateLicense(kit, license.licenseKey, { expiresAt: past });
  t.like(updated, { status: 'expired', expiresAt: past });
  await assertRefused(t, kit, license, 'expired', 'license_expired');
});

test('a suspended license past its date reads expired', async (t) => {
  const license = await licenseWithDevice(kit);
  await updateLicense(kit, license.licenseKey, { status: 'suspended', expiresAt: inDays(-2) });
  await assertRefused(t, kit, license, 'expired', 'license_expired');
});

test('revoked: verify valid false, validate license_revoked', async (t) => {
  const license = await licenseWithDevice(kit);
  t.is((await updateLicense(kit, license.licenseKey, { status: 'revoked' })).status, 'revoked');
  await assertRefused(t, kit, license, 'revoked', 'license_revoked');
});

test('revoked stays revoked past its date (revoked wins over expired)', async (t) => {
  const license = await licenseWithDevice(kit);
  await updateLicense(kit, license.licenseKey, { status: 'revoked', expiresAt: inDays(-1) });
  await assertRefused(t, kit, license, 'revoked', 'license_revoked');
});

test('revoked is final: PUT to active or suspended is 409 license_revoked and changes nothing', async (t) => {
  const license = await licenseWithDevice(kit);
  const revoked = await updateLicense(kit, license.licenseKey, { status: 'revoked' });
  for (const body of [
    { status: 'active' },
    { status: 'suspended' },
    { status: 'active', maxActivations: 50, features: { hacked: true }, expiresAt: inDays(30) },
  ]) {
    const res = await kit.admin(`/api/licenses/${license.licenseKey}`, { method: 'PUT', body });
    t.is(res.status, 409, JSON.stringify(body));
    t.is(res.body.error.code, 'license_revoked');
    t.deepEqual(await getLicense(kit, license.licenseKey), revoked);
  }
  // A renewal date does not bring it back either.
  const later = await updateLicense(kit, license.licenseKey, { expiresAt: inDays(30) });
  t.is(later.status, 'revoked');
  t.is((await validate(kit, license.licenseKey, 'known-device')).body.error, 'license_revoked');
  // Revoking again is allowed and keeps it revoked; its other fields may still change.
  t.like(await updateLicense(kit, license.licenseKey, { status: 'revoked', features: { note: ['refunded'] } }), {
    status: 'revoked',
    features: { note: ['refunded'] },
  });
});

test('expired is not a status an admin sets: PUT status expired is 400', async (t) => {
  const license = await issueLicense(kit);
  const res = await kit.admin(`/api/licenses/${license.licenseKey}`, { method: 'PUT', body: { status: 'expired' } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'invalid_request');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['status'],
  );
  t.is((await getLicense(kit, license.licenseKey)).status, 'active');
});

test('renewal: a license expired by date given a future expiresAt reads active and validates again', async (t) => {
  const license = await licenseWithDevice(kit);
  await updateLicense(kit, license.licenseKey, { expiresAt: inDays(-1) });
  t.is((await verify(kit, license.licenseKey)).body.status, 'expired');
  const future = inDays(365);
  t.like(await updateLicense(kit, license.licenseKey, { expiresAt: future }), { status: 'active', expiresAt: future });
  t.deepEqual((await verify(kit, license.licenseKey)).body, {
    valid: true,
    status: 'active',
    features: { pro: true },
    expiresAt: future,
  });
  t.like((await validate(kit, license.licenseKey, 'known-device')).body, { valid: true, currentActivations: 1 });
  t.like((await validate(kit, license.licenseKey, 'another-device')).body, { valid: true, currentActivations: 2 });
});

// Serial: expireLicenses sweeps the whole table, so it runs before the concurrent tests add licenses.
test.serial(
  'renewal: a license stored expired by expireLicenses and given a future expiresAt is stored active and validates',
  async (t) => {
    const license = await licenseWithDevice(kit);
    await updateLicense(kit, license.licenseKey, { expiresAt: inDays(-1) });
    await expireLicenses(kit.app.db, new Date());
    const stored = () => kit.app.db('licenses').where({ id: license.id }).first();
    t.is((await stored()).status, 'expired');
    await assertRefused(t, kit, license, 'expired', 'license_expired');

    const renewed = await updateLicense(kit, license.licenseKey, { expiresAt: inDays(60) });
    t.is(renewed.status, 'active');
    t.is((await stored()).status, 'active');
    t.true((await verify(kit, license.licenseKey)).body.valid);
    t.like((await validate(kit, license.licenseKey, 'new-device')).body, { valid: true, currentActivations: 2 });
  },
);

test.serial('renewal by clearing the date: a stored-expired license given expiresAt null reads active', async (t) => {
  const license = await licenseWithDevice(kit);
  await updateLicense(kit, license.licenseKey, { expiresAt: inDays(-1) });
  await expireLicenses(kit.app.db, new Date());
  const renewed = await updateLicense(kit, license.licenseKey, { expiresAt: null });
  t.like(renewed, { status: 'active', expiresAt: null });
  t.true((await validate(kit, license.licenseKey, 'known-device')).body.valid);
});

test.serial('a past date on a stored-expired license is no renewal', async (t) => {
  const license = await licenseWithDevice(kit);
  await updateLicense(kit, license.licenseKey, { expiresAt: inDays(-1) });
  await expireLicenses(kit.app.db, new Date());
  t.is((await updateLicense(kit, license.licenseKey, { expiresAt: inDays(-3) })).status, 'expired');
  t.is((await kit.app.db('licenses').where({ id: license.id }).first()).status, 'expired');
});

test('no status but active ever activates a device, even under concurrency', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ status: 'suspended' }, 'license_suspended'],
    [{ expiresAt: inDays(-1) }, 'license_expired'],
    [{ status: 'revoked' }, 'license_revoked'],
  ];
  for (const [change, error] of cases) {
    const license = await issueLicense(kit, { maxActivations: 100 });
    await updateLicense(kit, license.licenseKey, change);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => validate(kit, license.licenseKey, `racer-${i}`)),
    );
    t.true(
      answers.every((r) => r.status === 200 && r.body.valid === false && r.body.error === error),
      error,
    );
    t.is(await activationRows(kit.app.db, license.id), 0, error);
    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 0, error);
  }
});

test('a refused validate does not refresh a known device', async (t) => {
  const license = await licenseWithDevice(kit);
  const [before] = (await kit.admin(`/api/licenses/${license.licenseKey}/activations`)).body;
  await updateLicense(kit, license.licenseKey, { status: 'suspended' });
  await validate(kit, license.licenseKey, 'known-device', 'Renamed while suspended');
  const [after] = (await kit.admin(`/api/licenses/${license.licenseKey}/activations`)).body;
  t.deepEqual(after, before);
});
