/**
 * C-11 audit log, on the licenses domain: one row per admin write (API and console) with before/after, none
 * for a refusal, none for the public endpoints (verify, validate); the sweep's expiries as `system`.
 */
import test from 'ava';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import {
  createCustomer,
  createProduct,
  inDays,
  issueLicense,
  startLicenseApp,
  validate,
  verify,
  type LicenseKit,
} from '../licenses/fixtures.ts';
import { auditMark, auditTableText, expectNoAudit, expectOneAudit } from './fixtures.ts';
import { consoleCsrf } from '../helpers/auth.ts';

let kit: LicenseKit;
test.before(async () => {
  kit = await startLicenseApp();
});
test.after.always(async () => kit?.close());

const db = () => kit.app.db;
const put = (key: string, body: Record<string, unknown>) => kit.admin(`/api/licenses/${key}`, { method: 'PUT', body });

/** A console form post as a browser sends it; answers the status (303 on success). */
async function consolePost(path: string, fields: Record<string, string>): Promise<number> {
  const csrf = await consoleCsrf(kit.app.baseUrl, kit.cookie);
  const res = await fetch(`${kit.app.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: kit.cookie,
      'x-request-id': 'req-console-lic',
    },
  });
  await res.arrayBuffer();
  return res.status;
}

test.serial(
  'API: create, update, suspend, reinstate, revoke, device removal and delete each leave one row with the changed ' +
    'fields',
  async (t) => {
    const customer = await createCustomer(kit);
    const product = await createProduct(kit);
    let mark = await auditMark(db());
    const created = await kit.admin('/api/licenses', {
      body: { customerId: customer.id, productId: product.id, maxActivations: 2, features: { pro: true } },
      headers: { 'x-request-id': 'req-lic-1' },
    });
    t.is(created.status, 201);
    const key: string = created.body.licenseKey;
    const row = await expectOneAudit(t, db(), mark, {
      action: 'license.create',
      target_type: 'license',
      target_id: key,
      request_id: 'req-lic-1',
      before: null,
    });
    t.deepEqual(
      row.after,
      { customerId: customer.id, productId: product.id, status: 'active', maxActivations: 2, features: { pro: true } },
      'a create records what it set (null fields are left out)',
    );

    mark = await auditMark(db());
    t.is((await put(key, { maxActivations: 3, features: { pro: false }, expiresAt: '2031-01-01' })).status, 200);
    await expectOneAudit(t, db(), mark, {
      action: 'license.update',
      target_id: key,
      before: { maxActivations: 2, features: { pro: true }, expiresAt: null },
      after: { maxActivations: 3, features: { pro: false }, expiresAt: '2031-01-01T00:00:00.000Z' },
    });

    mark = await auditMark(db());
    t.is((await put(key, { status: 'suspended', maxActivations: 4 })).status, 200);
    await expectOneAudit(t, db(), mark, {
      action: 'license.suspend',
      before: { status: 'active', maxActivations: 3 },
      after: { status: 'suspended', maxActivations: 4 },
    });

    mark = await auditMark(db());
    t.is((await put(key, { status: 'active' })).status, 200);
    await expectOneAudit(t, db(), mark, {
      action: 'license.reinstate',
      before: { status: 'suspended' },
      after: { status: 'active' },
    });

    mark = await auditMark(db());
    t.is((await put(key, { status: 'active' })).status, 200);
    await expectOneAudit(t, db(), mark, { action: 'license.update', before: {}, after: {} });

    t.true((await validate(kit, key, 'device-1', 'Work laptop')).body.valid);
    mark = await auditMark(db());
    t.is((await kit.admin(`/api/licenses/${key}/activations/device-1`, { method: 'DELETE' })).status, 204);
    const removed = await expectOneAudit(t, db(), mark, {
      action: 'license.device_remove',
      target_type: 'license',
      target_id: key,
      after: null,
    });
    t.like(removed.before, { deviceId: 'device-1', deviceName: 'Work laptop' });
    t.regex(String(removed.before!.activatedAt), /^\d{4}-\d{2}-\d{2}T/);
    t.regex(String(removed.before!.lastSeenAt), /^\d{4}-\d{2}-\d{2}T/);

    mark = await auditMark(db());
    t.is((await put(key, { status: 'revoked' })).status, 200);
    await expectOneAudit(t, db(), mark, {
      action: 'license.revoke',
      before: { status: 'active' },
      after: { status: 'revoked' },
    });

    mark = await auditMark(db());
    t.is((await kit.admin(`/api/licenses/${key}`, { method: 'DELETE' })).status, 204);
    const deleted = await expectOneAudit(t, db(), mark, { action: 'license.delete', target_id: key, after: null });
    t.like(deleted.before, { customerId: customer.id, status: 'revoked', maxActivations: 4, currentActivations: 0 });
  },
);

test.serial('refused or invalid writes leave no row', async (t) => {
  const license = await issueLicense(kit);
  await put(license.licenseKey, { status: 'revoked' });
  const mark = await auditMark(db());
  t.is((await put(license.licenseKey, { status: 'active' })).status, 409);
  t.is((await put(license.licenseKey, { maxActivations: 0 })).status, 400);
  t.is((await put('LIC-0000-0000-0000', { status: 'suspended' })).status, 404);
  t.is(
    (
      await kit.admin('/api/licenses', {
        body: { customerId: license.customerId, productId: '00000000-0000-4000-8000-000000000000' },
      })
    ).status,
    400,
  );
  t.is(
    (await kit.admin(`/api/licenses/${license.licenseKey}/activations/never-seen`, { method: 'DELETE' })).status,
    404,
  );
  t.is((await kit.admin('/api/licenses/LIC-0000-0000-0000', { method: 'DELETE' })).status, 404);
  await expectNoAudit(t, db(), mark);
  // Accepted but storing nothing: still the admin's action, recorded with no changed field.
  const empty = await auditMark(db());
  t.is((await put(license.licenseKey, {})).status, 200, 'an empty PUT changes nothing');
  await expectOneAudit(t, db(), empty, { action: 'license.update', before: {}, after: {} });
});

test.serial(
  'the public endpoints are not admin actions: verify, validate (activation) and refusals leave no row',
  async (t) => {
    const license = await issueLicense(kit, { maxActivations: 1 });
    const mark = await auditMark(db());
    t.true((await verify(kit, license.licenseKey)).body.valid);
    t.true((await validate(kit, license.licenseKey, 'first')).body.valid);
    t.true((await validate(kit, license.licenseKey, 'first')).body.valid);
    t.like((await validate(kit, license.licenseKey, 'second')).body, {
      valid: false,
      error: 'activation_limit_reached',
    });
    t.is((await verify(kit, 'LIC-0000-0000-0000')).status, 404);
    await expectNoAudit(t, db(), mark);
  },
);

test.serial(
  'console: issue, edit, status and device removal each leave one row with the admin and the request id; refusals none',
  async (t) => {
    const customer = await createCustomer(kit);
    const product = await createProduct(kit);
    let mark = await auditMark(db());
    t.is(
      await consolePost('/admin/licenses', {
        _form: 'create-license',
        customerId: customer.id,
        productId: product.id,
        maxActivations: '1',
        features: '{"seats": 2}',
      }),
      303,
    );
    const created = await expectOneAudit(t, db(), mark, {
      action: 'license.create',
      before: null,
      request_id: 'req-console-lic',
    });
    t.like(created.after, { maxActivations: 1, features: { seats: 2 } });
    t.truthy(created.actor_email);
    const key = created.target_id;

    mark = await auditMark(db());
    t.is(
      await consolePost(`/admin/licenses/${key}`, {
        _form: 'edit-license',
        maxActivations: '5',
        expiresAt: '',
        features: '{"seats": 2}',
      }),
      303,
    );
    await expectOneAudit(t, db(), mark, {
      action: 'license.update',
      target_id: key,
      before: { maxActivations: 1 },
      after: { maxActivations: 5 },
    });

    mark = await auditMark(db());
    t.is(await consolePost(`/admin/licenses/${key}/status`, { _form: 'license-status', status: 'suspended' }), 303);
    await expectOneAudit(t, db(), mark, {
      action: 'license.suspend',
      before: { status: 'active' },
      after: { status: 'suspended' },
    });
    t.like((await verify(kit, key)).body, { valid: false, status: 'suspended' });
    t.is(await consolePost(`/admin/licenses/${key}/status`, { _form: 'license-status', status: 'active' }), 303);

    t.true((await validate(kit, key, 'box 1', 'Box')).body.valid);
    mark = await auditMark(db());
    t.is(
      await consolePost(`/admin/licenses/${key}/activations/${encodeURIComponent('box 1')}/delete`, {
        _form: 'remove-device',
      }),
      303,
    );
    const removed = await expectOneAudit(t, db(), mark, { action: 'license.device_remove', after: null });
    t.like(removed.before, { deviceId: 'box 1', deviceName: 'Box' });

    mark = await auditMark(db());
    t.is(
      await consolePost(`/admin/licenses/${key}`, {
        _form: 'edit-license',
        maxActivations: '5',
        features: '{"seats": ',
      }),
      400,
    );
    t.is(await consolePost(`/admin/licenses/${key}`, { _form: 'edit-license', maxActivations: '-1' }), 400);
    t.is(await consolePost(`/admin/licenses/${key}/status`, { _form: 'license-status', status: 'expired' }), 400);
    t.is(await consolePost(`/admin/licenses/${key}/activations/box%201/delete`, { _form: 'remove-device' }), 404);
    t.is(
      await consolePost('/admin/licenses', {
        _form: 'create-license',
        customerId: customer.id,
        productId: product.id,
        features: '[not json',
      }),
      400,
    );
    await expectNoAudit(t, db(), mark);
  },
);

test.serial("the sweep's expiries are recorded with actor system, set-wise", async (t) => {
  const expiring = await Promise.all([
    issueLicense(kit, { expiresAt: inDays(1) }),
    issueLicense(kit, { expiresAt: inDays(1) }),
  ]);
  const mark = await auditMark(db());
  await runLifecycleSweep(kit.app.deps, new Date(Date.now() + 2 * 86_400_000));
  const rows = await db()('audit_log')
    .where({ action: 'license.expire' })
    .whereIn(
      'target_id',
      expiring.map((l) => l.licenseKey),
    );
  t.is(rows.length, 2);
  for (const row of rows)
    t.like(row, {
      actor: 'system',
      actor_email: null,
      target_type: 'license',
      before: { status: 'active' },
      after: { status: 'expired' },
    });
  t.true((await auditMark(db())) >= mark + 2);
});

test.serial(
  'no secret reaches the table: the audit rows name a license by its key but hold no credential',
  async (t) => {
    const text = await auditTableText(db());
    t.notRegex(text, /"(password|secret|token|hash)"\s*:\s*"(?!\[redacted\])/i);
    t.false(text.includes(kit.cookie.split('=')[1]!), 'the session token never appears');
  },
);
