/**
 * The culling sweep (D-102): dead activations are deleted set-wise and each emits exactly one
 * license.device_culled, even with two sweeps at once; live devices and licenses without heartbeats
 * are untouched. The job is a scheduled job of the lifecycle worker, run here by calling the service.
 */
import test from 'ava';
import { cullDeadDevicesJob } from '../../src/licenses/cull-devices.job.ts';
import { cullDeadDevices } from '../../src/licenses/seats.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { getLicense, issueLicense, licenseEvents, startLicenseApp, validate, type LicenseKit } from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;

async function activate(key: string, ...devices: string[]): Promise<void> {
  for (const d of devices) {
    const res = await validate(kit, key, d);
    if (res.body.valid !== true) throw new Error(`activate ${d}: ${res.text}`);
  }
}

async function silentFor(licenseId: string, deviceId: string, seconds: number): Promise<Date> {
  const [row] = await db()('license_activations')
    .where({ license_id: licenseId, device_id: deviceId })
    .update({ last_seen_at: db().raw(`date_trunc('milliseconds', now()) - ? * interval '1 second'`, [seconds]) })
    .returning('last_seen_at');
  return row.last_seen_at;
}

const devicesOf = async (licenseId: string) =>
  (await db()('license_activations').where({ license_id: licenseId }).orderBy('device_id')).map(
    (r: { device_id: string }) => r.device_id,
  );

test.serial(
  'two sweeps at once delete each dead device once and record exactly one license.device_culled each',
  async (t) => {
    const floating = await issueLicense(kit, { maxActivations: 4, heartbeatIntervalSeconds: 10 });
    await activate(floating.licenseKey, 'live', 'silent', 'released', 'spare');
    const silentSeen = await silentFor(floating.id, 'silent', 25);
    const releasedSeen = await silentFor(floating.id, 'released', 60);
    // A newcomer's validate at the limit takes the dead devices' seats before any sweep (released).
    await activate(floating.licenseKey, 'newcomer');
    t.is((await getLicense(kit, floating.licenseKey)).currentActivations, 3);
    // Silent only (not yet released): a second floating license whose dead device still counts in the figure.
    const other = await issueLicense(kit, { maxActivations: 2, heartbeatIntervalSeconds: 30 });
    await activate(other.licenseKey, 'old-box', 'fresh-box');
    const oldSeen = await silentFor(other.id, 'old-box', 61);
    await silentFor(other.id, 'fresh-box', 45);
    // Heartbeats off: an old device is never dead.
    const plain = await issueLicense(kit, { maxActivations: 1 });
    await activate(plain.licenseKey, 'ancient');
    await silentFor(plain.id, 'ancient', 10 * 86_400);

    const counts = await Promise.all([cullDeadDevices(db()), cullDeadDevices(db()), cullDeadDevices(db(), 1)]);
    t.is(
      counts.reduce((a, b) => a + b, 0),
      3,
      `culled ${counts.join('+')}`,
    );

    t.deepEqual(await devicesOf(floating.id), ['live', 'newcomer', 'spare']);
    t.deepEqual(await devicesOf(other.id), ['fresh-box']);
    t.deepEqual(await devicesOf(plain.id), ['ancient']);
    t.is((await getLicense(kit, floating.licenseKey)).currentActivations, 3, 'released seats were counted out already');
    t.is(
      (await getLicense(kit, other.licenseKey)).currentActivations,
      1,
      'a silent device leaves the count as it goes',
    );
    t.is((await getLicense(kit, plain.licenseKey)).currentActivations, 1);

    const floatingEvents = await licenseEvents(kit, 'license.device_culled', floating.id);
    t.deepEqual(
      floatingEvents.map((e) => e.data).sort((a, b) => String(a.deviceId).localeCompare(String(b.deviceId))),
      [
        {
          licenseId: floating.id,
          licenseKey: floating.licenseKey,
          deviceId: 'released',
          lastSeenAt: releasedSeen.toISOString(),
        },
        {
          licenseId: floating.id,
          licenseKey: floating.licenseKey,
          deviceId: 'silent',
          lastSeenAt: silentSeen.toISOString(),
        },
      ],
    );
    t.deepEqual(
      (await licenseEvents(kit, 'license.device_culled', other.id)).map((e) => e.data),
      [{ licenseId: other.id, licenseKey: other.licenseKey, deviceId: 'old-box', lastSeenAt: oldSeen.toISOString() }],
    );
    t.deepEqual(await licenseEvents(kit, 'license.device_culled', plain.id), []);

    // Nothing is left to cull: a later sweep records nothing.
    t.is(await cullDeadDevices(db()), 0);
    t.is((await licenseEvents(kit, 'license.device_culled', floating.id)).length, 2);
    // A culled device must validate again; the freed seat takes it.
    t.like((await validate(kit, other.licenseKey, 'old-box')).body, { valid: true, currentActivations: 2 });
  },
);

test.serial(
  'turning heartbeats off keeps silent devices, but a device whose seat was released is still culled',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 1, heartbeatIntervalSeconds: 10 });
    await activate(license.licenseKey, 'first');
    await silentFor(license.id, 'first', 30);
    await activate(license.licenseKey, 'second');
    await silentFor(license.id, 'second', 30);
    t.is(
      (
        await kit.admin(`/api/licenses/${license.licenseKey}`, {
          method: 'PUT',
          body: { heartbeatIntervalSeconds: null },
        })
      ).status,
      200,
    );
    // (Other tests' devices may die meanwhile on a slow machine: this license's rows and events say what happened.)
    t.true((await cullDeadDevices(db())) >= 1);
    t.deepEqual(await devicesOf(license.id), ['second']);
    t.deepEqual(
      (await licenseEvents(kit, 'license.device_culled', license.id)).map((e) => e.data.deviceId),
      ['first'],
    );
    t.is((await getLicense(kit, license.licenseKey)).currentActivations, 1);
  },
);

test(
  'the sweep is a job of the lifecycle worker, ' + 'scheduled every minute, and webhooks may subscribe to its event',
  async (t) => {
    t.like(cullDeadDevicesJob, { name: 'licenses.cull-dead-devices', group: 'lifecycle', schedule: '* * * * *' });
    t.true(jobHandlers.some((h) => h.definition === cullDeadDevicesJob));
    const endpoint = await kit.admin('/api/billing/webhooks/endpoints', {
      body: { url: 'http://127.0.0.1:9/hook', events: ['license.device_culled'] },
    });
    t.is(endpoint.status, 201, endpoint.text);
  },
);
