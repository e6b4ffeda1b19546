/**
 * Device activation through POST /api/licenses/validate (D-31, D-34, D-35): the limit holds under
 * concurrency, a device is counted once, removing a device frees its slot, lowering the limit keeps
 * the devices already there.
 *
 * Every call here comes from 127.0.0.1, so the file stays under the default 600 public requests a
 * minute (D-16): about 330 in all. The rate-limit file shows 600 pass and the 601st is refused.
 */
import test from 'ava';
import type { Json } from '../helpers/http.ts';
import {
  activationRows,
  getLicense,
  issueLicense,
  startLicenseApp,
  updateLicense,
  validate,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const bodiesOf = (responses: { status: number; body: Json }[]) => {
  for (const r of responses)
    if (r.status !== 200) throw new Error(`validate answered ${r.status}: ${JSON.stringify(r.body)}`);
  return responses.map((r) => r.body);
};

test(
  '50 concurrent new devices at maxActivations 5: ' + 'exactly 5 activate, 45 get activation_limit_reached',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 5 });
    const devices = Array.from({ length: 50 }, (_, i) => `device-${i}`);
    const bodies = bodiesOf(await Promise.all(devices.map((d) => validate(kit, license.licenseKey, d))));

    const winners = bodies.filter((b) => b.valid === true);
    const refused = bodies.filter((b) => b.valid === false);
    t.is(winners.length, 5);
    t.is(refused.length, 45);
    for (const body of refused) {
      t.deepEqual(body, {
        valid: false,
        error: 'activation_limit_reached',
        status: 'active',
        features: {},
        expiresAt: null,
        maxActivations: 5,
        currentActivations: 5,
      });
    }
    // Each winner was counted in turn: the counts it saw are 1..5, once each.
    t.deepEqual(winners.map((b) => b.currentActivations).sort(), [1, 2, 3, 4, 5]);

    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 5);
    t.is(await activationRows(kit.app.db, license.id), 5);
    const listed = await kit.admin(`/api/licenses/${license.licenseKey}/activations`);
    t.deepEqual(
      listed.body.map((a: { deviceId: string }) => a.deviceId).sort(),
      winners.map((b) => b.activation.deviceId).sort(),
    );
  },
);

test('200 concurrent validates of one device on a fresh license: all valid, counted once', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 3 });
  const bodies = bodiesOf(
    await Promise.all(Array.from({ length: 200 }, () => validate(kit, license.licenseKey, 'the-one-device', 'Laptop'))),
  );

  t.true(bodies.every((b) => b.valid === true));
  t.true(bodies.every((b) => b.currentActivations === 1 && b.activation.deviceId === 'the-one-device'));
  t.is(
    new Set(bodies.map((b) => b.activation.activatedAt)).size,
    1,
    'one activation, the same activatedAt in every answer',
  );
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 1);
  t.is(await activationRows(kit.app.db, license.id), 1);
});

test('an unlimited license (maxActivations null) takes every new device and counts each', async (t) => {
  const license = await issueLicense(kit, { maxActivations: null });
  t.is(license.maxActivations, null);
  const bodies = bodiesOf(
    await Promise.all(Array.from({ length: 20 }, (_, i) => validate(kit, license.licenseKey, `fleet-${i}`))),
  );
  t.true(bodies.every((b) => b.valid === true && b.maxActivations === null));
  t.deepEqual(
    bodies.map((b) => b.currentActivations).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 20);
  t.is(await activationRows(kit.app.db, license.id), 20);
});

test('removing an activation frees its slot: a new device then activates', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 2 });
  t.true((await validate(kit, license.licenseKey, 'a')).body.valid);
  t.true((await validate(kit, license.licenseKey, 'b')).body.valid);
  t.is((await validate(kit, license.licenseKey, 'c')).body.error, 'activation_limit_reached');

  const removed = await kit.admin(`/api/licenses/${license.licenseKey}/activations/a`, { method: 'DELETE' });
  t.is(removed.status, 204);
  t.is(removed.text, '');
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 1);

  const c = await validate(kit, license.licenseKey, 'c');
  t.like(c.body, { valid: true, currentActivations: 2, activation: { deviceId: 'c' } });
  // The removed device is new again, and the license is full again.
  t.like((await validate(kit, license.licenseKey, 'a')).body, {
    valid: false,
    error: 'activation_limit_reached',
    currentActivations: 2,
  });
  t.is(await activationRows(kit.app.db, license.id), 2);
});

test('removing an unknown device or from an unknown key is 404 and changes nothing', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 2 });
  await validate(kit, license.licenseKey, 'kept');
  const unknownDevice = await kit.admin(`/api/licenses/${license.licenseKey}/activations/never-seen`, {
    method: 'DELETE',
  });
  t.is(unknownDevice.status, 404);
  t.is(unknownDevice.body.error.code, 'not_found');
  const unknownKey = await kit.admin('/api/licenses/LIC-0000-0000-0000/activations/kept', { method: 'DELETE' });
  t.is(unknownKey.status, 404);
  t.is(unknownKey.body.error.code, 'not_found');
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 1);
  t.is(await activationRows(kit.app.db, license.id), 1);
  // Removing the same device twice: the second is 404 and the count does not go below the rows.
  t.is((await kit.admin(`/api/licenses/${license.licenseKey}/activations/kept`, { method: 'DELETE' })).status, 204);
  t.is((await kit.admin(`/api/licenses/${license.licenseKey}/activations/kept`, { method: 'DELETE' })).status, 404);
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 0);
});

test('a device id with URL-special characters is removed by its encoded path', async (t) => {
  const license = await issueLicense(kit);
  const deviceId = 'MAC/00:1a:2b?x=1 #ü';
  t.true((await validate(kit, license.licenseKey, deviceId)).body.valid);
  t.is(
    (
      await kit.admin(`/api/licenses/${license.licenseKey}/activations/${encodeURIComponent(deviceId)}`, {
        method: 'DELETE',
      })
    ).status,
    204,
  );
  t.is(await activationRows(kit.app.db, license.id), 0);
});

test('lowering maxActivations below currentActivations keeps existing devices and refuses new ones', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 5 });
  for (const d of ['d1', 'd2', 'd3']) t.true((await validate(kit, license.licenseKey, d)).body.valid);

  const lowered = await updateLicense(kit, license.licenseKey, { maxActivations: 1 });
  t.like(lowered, { maxActivations: 1, currentActivations: 3 });
  t.is(await activationRows(kit.app.db, license.id), 3);

  for (const d of ['d1', 'd2', 'd3']) {
    t.like((await validate(kit, license.licenseKey, d)).body, {
      valid: true,
      maxActivations: 1,
      currentActivations: 3,
      activation: { deviceId: d },
    });
  }
  t.deepEqual((await validate(kit, license.licenseKey, 'd4')).body, {
    valid: false,
    error: 'activation_limit_reached',
    status: 'active',
    features: {},
    expiresAt: null,
    maxActivations: 1,
    currentActivations: 3,
  });

  // Freeing slots: still full at 1 of 1, free at 0 of 1.
  await kit.admin(`/api/licenses/${license.licenseKey}/activations/d1`, { method: 'DELETE' });
  await kit.admin(`/api/licenses/${license.licenseKey}/activations/d2`, { method: 'DELETE' });
  t.is((await validate(kit, license.licenseKey, 'd4')).body.error, 'activation_limit_reached');
  await kit.admin(`/api/licenses/${license.licenseKey}/activations/d3`, { method: 'DELETE' });
  t.like((await validate(kit, license.licenseKey, 'd4')).body, { valid: true, currentActivations: 1 });

  // Raising the limit (or making it unlimited) lets new devices in again.
  await updateLicense(kit, license.licenseKey, { maxActivations: null });
  t.like((await validate(kit, license.licenseKey, 'd5')).body, {
    valid: true,
    maxActivations: null,
    currentActivations: 2,
  });
});

test('concurrent removals and new devices keep the count equal to the rows and within the limit', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 3 });
  for (const d of ['x1', 'x2', 'x3']) await validate(kit, license.licenseKey, d);
  const removals = ['x1', 'x2'].map((d) =>
    kit.admin(`/api/licenses/${license.licenseKey}/activations/${d}`, { method: 'DELETE' }),
  );
  const arrivals = Array.from({ length: 20 }, (_, i) => validate(kit, license.licenseKey, `y${i}`));
  const [removed, arrived] = await Promise.all([Promise.all(removals), Promise.all(arrivals)]);
  t.deepEqual(
    removed.map((r) => r.status),
    [204, 204],
  );
  t.true(arrived.every((r) => r.status === 200));

  const rows = await activationRows(kit.app.db, license.id);
  const current = (await getLicense(kit, license.licenseKey)).currentActivations;
  t.is(current, rows);
  t.true(rows <= 3);
  t.is(rows, 1 + arrived.filter((r) => r.body.valid).length);
});

test('a known device re-validates without counting again; its name and lastSeenAt update', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 1 });
  const first = await validate(kit, license.licenseKey, 'workstation', 'Old Name');
  t.like(first.body, {
    valid: true,
    currentActivations: 1,
    activation: { deviceId: 'workstation', deviceName: 'Old Name' },
  });
  await new Promise((r) => setTimeout(r, 20));

  const again = await validate(kit, license.licenseKey, 'workstation', 'New Name');
  t.like(again.body, {
    valid: true,
    currentActivations: 1,
    maxActivations: 1,
    activation: { deviceId: 'workstation', deviceName: 'New Name' },
  });
  t.is(again.body.activation.activatedAt, first.body.activation.activatedAt);
  t.true(again.body.activation.lastSeenAt > first.body.activation.lastSeenAt);

  const [listed] = (await kit.admin(`/api/licenses/${license.licenseKey}/activations`)).body;
  t.deepEqual(listed, again.body.activation);
  t.is(await activationRows(kit.app.db, license.id), 1);
});
