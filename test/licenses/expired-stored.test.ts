/**
 * A stored `expired` stands (D-32): a lifecycle sweep run as of a later time (D-81) stores it for a license
 * whose date has not come by the real clock, and GET, verify and validate say expired from then on, until a
 * PUT renews it with a future expiresAt or a status.
 */
import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { CRON_SECRET, cron } from '../lifecycle/fixtures.ts';
import {
  assertRefused,
  getLicense,
  inDays,
  licenseEvents,
  licenseWithDevice,
  startLicenseApp,
  updateLicense,
  validate,
  verify,
  type License,
  type LicenseKit,
} from './fixtures.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp({ CRON_SECRET });
  await registerWorkers(kit.app.boss, kit.app.deps, ['lifecycle'], jobHandlers);
});
test.after.always(async () => kit?.close());

const storedStatus = async (id: string) => (await kit.app.db('licenses').where({ id }).first()).status;
const listedKeys = async (status: string) =>
  (await kit.admin(`/api/licenses?status=${status}&limit=100`)).body.map((l: License) => l.licenseKey);

/** A license due in 10 days with one device, stored expired by the sweep of 30 days from now. */
async function expiredByFutureSweep(t: import('ava').ExecutionContext): Promise<License> {
  const license = await licenseWithDevice(kit, { expiresAt: inDays(10) });
  const res = await cron(kit.app, { asOf: inDays(30), wait: true });
  t.is(res.status, 200, res.text);
  t.true(res.body.licensesExpired >= 1);
  t.is(await storedStatus(license.id), 'expired');
  t.is((await licenseEvents(kit, 'license.expired', license.id)).length, 1);
  return license;
}

// Serial: each sweep expires every license due by its asOf, those of the other tests too.
test.serial(
  'stored expired by a sweep ahead of the clock: GET, verify and validate say expired; a PUT of other fields ' +
    'changes nothing',
  async (t) => {
    const license = await expiredByFutureSweep(t);
    await assertRefused(t, kit, license, 'expired', 'license_expired');
    t.true((await listedKeys('expired')).includes(license.licenseKey));
    t.false((await listedKeys('active')).includes(license.licenseKey));

    t.is(
      (await updateLicense(kit, license.licenseKey, { features: { pro: false }, maxActivations: 9 })).status,
      'expired',
    );
    t.is(await storedStatus(license.id), 'expired');
    await assertRefused(t, kit, license, 'expired', 'license_expired');
  },
);

test.serial('renewal by a future expiresAt: active and valid again everywhere', async (t) => {
  const license = await expiredByFutureSweep(t);
  const future = inDays(60);
  t.like(await updateLicense(kit, license.licenseKey, { expiresAt: future }), { status: 'active', expiresAt: future });
  t.is(await storedStatus(license.id), 'active');
  t.is((await getLicense(kit, license.licenseKey)).status, 'active');
  t.deepEqual((await verify(kit, license.licenseKey)).body, {
    valid: true,
    status: 'active',
    features: { pro: true },
    expiresAt: future,
  });
  t.like((await validate(kit, license.licenseKey, 'known-device')).body, {
    valid: true,
    status: 'active',
    currentActivations: 1,
  });
  t.like((await validate(kit, license.licenseKey, 'new-device')).body, {
    valid: true,
    status: 'active',
    currentActivations: 2,
  });
  t.true((await listedKeys('active')).includes(license.licenseKey));
  t.false((await listedKeys('expired')).includes(license.licenseKey));
});

test.serial('renewal by status: PUT status active makes it active and valid again, its date unchanged', async (t) => {
  const license = await expiredByFutureSweep(t);
  t.like(await updateLicense(kit, license.licenseKey, { status: 'active' }), {
    status: 'active',
    expiresAt: license.expiresAt,
  });
  t.is(await storedStatus(license.id), 'active');
  t.deepEqual((await verify(kit, license.licenseKey)).body, {
    valid: true,
    status: 'active',
    features: { pro: true },
    expiresAt: license.expiresAt,
  });
  t.like((await validate(kit, license.licenseKey, 'new-device')).body, {
    valid: true,
    status: 'active',
    currentActivations: 2,
  });
});
