/**
 * Floating seats (D-102): heartbeatIntervalSeconds on a license, POST /api/licenses/heartbeat, dead devices
 * (silent for more than twice the interval) freed at once by validate itself, under any concurrency.
 *
 * Time moves by setting last_seen_at in the database, never by sleeping. About 450 public calls from
 * 127.0.0.1 in all, under the default 600 a minute (D-16).
 */
import test from 'ava';
import { auditMark, expectOneAudit } from '../audit/fixtures.ts';
import { request } from '../helpers/http.ts';
import { backendPid, waitUntilBlocked } from '../helpers/wait.ts';
import {
  createCustomer,
  createProduct,
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

const db = () => kit.app.db;
const heartbeat = (licenseKey: unknown, deviceId: unknown) =>
  request(kit.app.baseUrl, '/api/licenses/heartbeat', { body: { licenseKey, deviceId } });

/** The device was last seen `seconds` ago (as the database's clock reads). */
async function silentFor(licenseId: string, deviceId: string, seconds: number): Promise<void> {
  const n = await db()('license_activations')
    .where({ license_id: licenseId, device_id: deviceId })
    .update({ last_seen_at: db().raw(`now() - ? * interval '1 second'`, [seconds]) });
  if (n !== 1) throw new Error(`no activation ${deviceId}`);
}

/** Devices holding a live seat, straight from the table: not released and seen within twice the interval. */
async function liveDevices(licenseId: string, intervalSeconds: number): Promise<string[]> {
  const rows = await db()('license_activations')
    .where({ license_id: licenseId })
    .whereNull('released_at')
    .where('last_seen_at', '>=', db().raw(`now() - ? * interval '2 seconds'`, [intervalSeconds]))
    .orderBy('device_id');
  return rows.map((r: { device_id: string }) => r.device_id);
}

async function activate(key: string, ...devices: string[]): Promise<void> {
  for (const d of devices) {
    const res = await validate(kit, key, d);
    if (res.body.valid !== true) throw new Error(`activate ${d}: ${res.text}`);
  }
}

// Serial: the audit marks must not see the other tests' writes.
test.serial(
  'heartbeatIntervalSeconds is set on create and PUT, turned off with null, shown in every answer, and audited',
  async (t) => {
    const customer = await createCustomer(kit);
    const product = await createProduct(kit);
    const created = await kit.admin('/api/licenses', {
      body: { customerId: customer.id, productId: product.id, heartbeatIntervalSeconds: 600 },
    });
    t.is(created.status, 201);
    t.is(created.body.heartbeatIntervalSeconds, 600);
    const key = created.body.licenseKey;
    t.is((await getLicense(kit, key)).heartbeatIntervalSeconds, 600);
    t.is((await issueLicense(kit)).heartbeatIntervalSeconds, null, 'off unless asked');

    let mark = await auditMark(db());
    t.is((await updateLicense(kit, key, { heartbeatIntervalSeconds: 10 })).heartbeatIntervalSeconds, 10);
    await expectOneAudit(t, db(), mark, {
      action: 'license.update',
      target_id: key,
      before: { heartbeatIntervalSeconds: 600 },
      after: { heartbeatIntervalSeconds: 10 },
    });
    mark = await auditMark(db());
    t.is((await updateLicense(kit, key, { heartbeatIntervalSeconds: null })).heartbeatIntervalSeconds, null);
    await expectOneAudit(t, db(), mark, {
      action: 'license.update',
      target_id: key,
      before: { heartbeatIntervalSeconds: 10 },
      after: { heartbeatIntervalSeconds: null },
    });
    t.is((await updateLicense(kit, key, { heartbeatIntervalSeconds: 86_400 })).heartbeatIntervalSeconds, 86_400);

    const listed = await kit.admin(`/api/licenses?customerId=${customer.id}`);
    t.deepEqual(
      listed.body.map((l: { heartbeatIntervalSeconds: number | null }) => l.heartbeatIntervalSeconds),
      [86_400],
    );
  },
);

test(
  'an interval out of 10..86400, not an integer or not a number is 400 naming heartbeatIntervalSeconds, and stores ' +
    'nothing',
  async (t) => {
    const customer = await createCustomer(kit);
    const product = await createProduct(kit);
    const license = await issueLicense(kit, {
      customerId: customer.id,
      productId: product.id,
      heartbeatIntervalSeconds: 60,
    });
    for (const bad of [9, 0, -10, 86_401, 10.5, '60', true]) {
      const create = await kit.admin('/api/licenses', {
        body: { customerId: customer.id, productId: product.id, heartbeatIntervalSeconds: bad },
      });
      t.is(create.status, 400, `create ${JSON.stringify(bad)}`);
      t.is(create.body.error.code, 'invalid_request');
      t.deepEqual(
        create.body.error.details.map((d: { path: string }) => d.path),
        ['heartbeatIntervalSeconds'],
        `create ${JSON.stringify(bad)}`,
      );
      t.regex(create.body.error.details[0].message, /10 to 86400/);
      const put = await kit.admin(`/api/licenses/${license.licenseKey}`, {
        method: 'PUT',
        body: { heartbeatIntervalSeconds: bad },
      });
      t.is(put.status, 400, `put ${JSON.stringify(bad)}`);
      t.deepEqual(
        put.body.error.details.map((d: { path: string }) => d.path),
        ['heartbeatIntervalSeconds'],
      );
    }
    t.is((await getLicense(kit, license.licenseKey)).heartbeatIntervalSeconds, 60);
    t.is((await kit.admin(`/api/licenses?customerId=${customer.id}`)).body.length, 1);
  },
);

test(
  'a heartbeat of an activated device answers valid, status and nextHeartbeatBefore, and refreshes lastSeenAt in ' +
    'place',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 2, heartbeatIntervalSeconds: 60 });
    await activate(license.licenseKey, 'laptop');
    await silentFor(license.id, 'laptop', 100);
    const res = await heartbeat(license.licenseKey.toLowerCase(), 'laptop');
    t.is(res.status, 200);
    t.deepEqual(Object.keys(res.body).sort(), ['nextHeartbeatBefore', 'status', 'valid']);
    t.like(res.body, { valid: true, status: 'active' });
    const row = await db()('license_activations').where({ license_id: license.id, device_id: 'laptop' }).first();
    t.true(Date.now() - row.last_seen_at.getTime() < 5_000, 'lastSeenAt is now');
    t.is(
      res.body.nextHeartbeatBefore,
      new Date(row.last_seen_at.getTime() + 60_000).toISOString(),
      'one interval after this heartbeat',
    );
    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 1, 'a heartbeat never counts a device');

    // Heartbeats off: the device is refreshed all the same, with no deadline.
    const plain = await issueLicense(kit);
    await activate(plain.licenseKey, 'desk');
    t.deepEqual((await heartbeat(plain.licenseKey, 'desk')).body, {
      valid: true,
      status: 'active',
      nextHeartbeatBefore: null,
    });
  },
);

test(
  'a heartbeat of an unknown device, an unknown key or a culled device is 404 device_not_activated; a bad body is ' +
    '400',
  async (t) => {
    const license = await issueLicense(kit, { heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'known');
    const notActivated = { valid: false, error: 'device_not_activated' };
    for (const [key, device] of [
      [license.licenseKey, 'stranger'],
      ['LIC-0000-0000-0000', 'known'],
      ['not a key', 'known'],
    ] as const) {
      const res = await heartbeat(key, device);
      t.is(res.status, 404, `${key} ${device}`);
      t.deepEqual(res.body, notActivated);
    }
    t.is((await kit.admin(`/api/licenses/${license.licenseKey}/activations/known`, { method: 'DELETE' })).status, 204);
    t.deepEqual(
      (await heartbeat(license.licenseKey, 'known')).body,
      notActivated,
      'a removed device must validate again',
    );
    for (const body of [
      { licenseKey: license.licenseKey },
      { licenseKey: license.licenseKey, deviceId: '' },
      { licenseKey: license.licenseKey, deviceId: 'x'.repeat(257) },
      { licenseKey: license.licenseKey, deviceId: 'a', extra: 1 },
    ]) {
      const res = await request(kit.app.baseUrl, '/api/licenses/heartbeat', { body });
      t.is(res.status, 400, JSON.stringify(body).slice(0, 80));
      t.is(res.body.error.code, 'invalid_request');
    }
  },
);

test(
  'a suspended license: the heartbeat keeps the device seated and answers valid false with the status; reinstated, ' +
    'valid again',
  async (t) => {
    const license = await issueLicense(kit, { heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'kiosk');
    await updateLicense(kit, license.licenseKey, { status: 'suspended' });
    await silentFor(license.id, 'kiosk', 15);
    const suspended = await heartbeat(license.licenseKey, 'kiosk');
    t.is(suspended.status, 200);
    t.like(suspended.body, { valid: false, status: 'suspended' });
    t.deepEqual(await liveDevices(license.id, 10), ['kiosk'], 'refreshed while suspended');
    await updateLicense(kit, license.licenseKey, { status: 'active' });
    t.like((await heartbeat(license.licenseKey, 'kiosk')).body, { valid: true, status: 'active' });
    await updateLicense(kit, license.licenseKey, { expiresAt: '2020-01-01' });
    t.like((await heartbeat(license.licenseKey, 'kiosk')).body, { valid: false, status: 'expired' });
  },
);

test(
  'a device that stops heartbeating loses its seat after twice the interval; ' +
    'one that keeps heartbeating never does',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 2, heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'steady', 'quiet');

    // Eight intervals pass: steady checks in every 8 s; quiet stops after its validate.
    const holders: string[] = [];
    for (let round = 1; round <= 10; round++) {
      await silentFor(license.id, 'steady', 8);
      const quietSilence = round * 8;
      await silentFor(license.id, 'quiet', quietSilence);
      t.is((await heartbeat(license.licenseKey, 'steady')).status, 200, `round ${round}`);
      // A newcomer that got in keeps heartbeating, however long this loop takes on a loaded machine.
      for (const holder of holders) t.is((await heartbeat(license.licenseKey, holder)).status, 200, holder);
      const newcomer = await validate(kit, license.licenseKey, `newcomer-${round}`);
      if (newcomer.body.valid) holders.push(`newcomer-${round}`);
      if (quietSilence <= 20) {
        // Not yet past twice the interval (20 s): the license is full.
        t.like(
          newcomer.body,
          { valid: false, error: 'activation_limit_reached', currentActivations: 2 },
          `round ${round}`,
        );
      } else if (round === 3) {
        t.like(newcomer.body, { valid: true, currentActivations: 2 }, `round ${round}: quiet's seat is free`);
      } else {
        t.like(
          newcomer.body,
          { valid: false, error: 'activation_limit_reached' },
          `round ${round}: the newcomer holds the seat`,
        );
      }
    }
    t.deepEqual(await liveDevices(license.id, 10), ['newcomer-3', 'steady']);
    // The dead device must validate again, and there is no seat for it.
    t.deepEqual((await heartbeat(license.licenseKey, 'quiet')).body, { valid: false, error: 'device_not_activated' });
    t.like((await validate(kit, license.licenseKey, 'quiet')).body, {
      valid: false,
      error: 'activation_limit_reached',
      currentActivations: 2,
    });
    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 2);
  },
);

test(
  'the boundary: silent for 17 s of a 10 s interval is live, for 21 s dead (a seat is free exactly when due, before ' +
    'any sweep)',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 1, heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'old');
    // 17, not 19: the request itself takes time on a loaded machine.
    await silentFor(license.id, 'old', 17);
    t.like((await validate(kit, license.licenseKey, 'new')).body, { valid: false, error: 'activation_limit_reached' });
    await silentFor(license.id, 'old', 21);
    t.like((await validate(kit, license.licenseKey, 'new')).body, { valid: true, currentActivations: 1 });
    t.is(
      Number(
        (await db()('license_activations').where({ license_id: license.id }).count<{ n: string }[]>('* as n'))[0]!.n,
      ),
      2,
      'the dead row waits for the sweep',
    );
  },
);

test('a dead device that validates again is a new activation when a seat is free', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 3, heartbeatIntervalSeconds: 10 });
  await activate(license.licenseKey, 'back', 'other');
  const first = await db()('license_activations').where({ license_id: license.id, device_id: 'back' }).first();
  await silentFor(license.id, 'back', 30);
  t.is((await heartbeat(license.licenseKey, 'back')).status, 404);
  const again = await validate(kit, license.licenseKey, 'back', 'Back again');
  t.like(again.body, {
    valid: true,
    currentActivations: 2,
    activation: { deviceId: 'back', deviceName: 'Back again' },
  });
  t.true(
    new Date(again.body.activation.activatedAt).getTime() > first.activated_at.getTime(),
    'activatedAt is the new activation',
  );
  t.is((await heartbeat(license.licenseKey, 'back')).status, 200);

  // Released by a newcomer's validate first, then back: the same.
  await silentFor(license.id, 'other', 30);
  await activate(license.licenseKey, 'third');
  t.not(
    (await db()('license_activations').where({ license_id: license.id, device_id: 'other' }).first()).released_at,
    null,
  );
  t.like((await validate(kit, license.licenseKey, 'other')).body, { valid: true, currentActivations: 3 });
  t.is((await getLicense(kit, license.licenseKey)).currentActivations, 3);
  t.deepEqual(await liveDevices(license.id, 10), ['back', 'other', 'third']);
});

test(
  '50 concurrent new devices at limit 5 with 3 live and 2 dead devices: exactly 2 get in, never more live devices ' +
    'than 5',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 5, heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'live-1', 'live-2', 'live-3', 'dead-1', 'dead-2');
    await silentFor(license.id, 'dead-1', 25);
    await silentFor(license.id, 'dead-2', 40);

    // The dead devices' heartbeats and the live ones' race the newcomers.
    const newcomers = Array.from({ length: 50 }, (_, i) => validate(kit, license.licenseKey, `new-${i}`));
    const beats = ['live-1', 'live-2', 'live-3', 'dead-1', 'dead-2'].map((d) => heartbeat(license.licenseKey, d));
    const answers = await Promise.all(newcomers);
    const beatAnswers = await Promise.all(beats);

    t.true(answers.every((r) => r.status === 200));
    const winners = answers.filter((r) => r.body.valid === true);
    t.is(winners.length, 2);
    t.deepEqual(winners.map((r) => r.body.currentActivations).sort(), [4, 5]);
    for (const r of answers.filter((a) => a.body.valid === false))
      t.like(r.body, { error: 'activation_limit_reached', maxActivations: 5, currentActivations: 5 });
    t.deepEqual(
      beatAnswers.map((r) => r.status),
      [200, 200, 200, 404, 404],
    );
    const live = await liveDevices(license.id, 10);
    t.is(live.length, 5);
    t.deepEqual(
      live.filter((d) => d.startsWith('live-')),
      ['live-1', 'live-2', 'live-3'],
    );
    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 5);
  },
);

test('devices dying while they heartbeat and newcomers validate: live devices never exceed the limit', async (t) => {
  const license = await issueLicense(kit, { maxActivations: 3, heartbeatIntervalSeconds: 10 });
  await activate(license.licenseKey, 'a', 'b', 'c');
  for (let round = 0; round < 6; round++) {
    // Every seated device dies within the next few milliseconds, while its heartbeat and newcomers race.
    const seated = await liveDevices(license.id, 10);
    await db()('license_activations')
      .where({ license_id: license.id })
      .whereIn('device_id', seated)
      .update({ last_seen_at: db().raw(`now() - interval '20 seconds' + (random() * 30) * interval '1 millisecond'`) });
    await Promise.all([
      ...seated.map((d) => heartbeat(license.licenseKey, d)),
      ...Array.from({ length: 8 }, (_, i) => validate(kit, license.licenseKey, `r${round}-${i}`)),
      ...seated.map((d) => heartbeat(license.licenseKey, d)),
    ]);
    const live = await liveDevices(license.id, 10);
    t.true(live.length <= 3, `round ${round}: ${live.join(',')}`);
    const { currentActivations } = await getLicense(kit, license.licenseKey);
    t.true(currentActivations <= 3, `round ${round}: currentActivations ${currentActivations}`);
  }
  t.pass();
});

test(
  'a heartbeat that read its device live but lands after a validate released its seat is refused (the row is ' +
    're-checked)',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 1, heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'racer');
    await silentFor(license.id, 'racer', 15);
    const before = await db()('license_activations').where({ license_id: license.id, device_id: 'racer' }).first();
    // A validate's release holds the device's row while the heartbeat, which saw it live, waits for it.
    const trx = await db().transaction();
    await trx('license_activations').where({ license_id: license.id, device_id: 'racer' }).forUpdate();
    const beat = heartbeat(license.licenseKey, 'racer');
    await waitUntilBlocked(db(), await backendPid(trx));
    await trx('license_activations')
      .where({ license_id: license.id, device_id: 'racer' })
      .update({ released_at: trx.fn.now() });
    await trx('licenses').where({ id: license.id }).update({ current_activations: 0 });
    await trx.commit();
    t.deepEqual((await beat).body, { valid: false, error: 'device_not_activated' });
    const after = await db()('license_activations').where({ license_id: license.id, device_id: 'racer' }).first();
    t.deepEqual(after.last_seen_at, before.last_seen_at, 'not refreshed');
    t.deepEqual(await liveDevices(license.id, 10), []);
  },
);

test("a newcomer takes a dead device's seat", async (t) => {
  const license = await issueLicense(kit, { maxActivations: 2, heartbeatIntervalSeconds: 10 });
  await activate(license.licenseKey, 'stays', 'leaves');
  await silentFor(license.id, 'leaves', 21);
  t.like((await validate(kit, license.licenseKey, 'arrives')).body, { valid: true, currentActivations: 2 });
  t.deepEqual(await liveDevices(license.id, 10), ['arrives', 'stays']);
});
