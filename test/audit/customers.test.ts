/** C-11 audit log, on the customers domain: one row per admin write, before/after, none for a refusal; the API list. */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { auditMark, expectNoAudit, expectOneAudit } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let adminEmail: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie, email: adminEmail } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

test.serial(
  'create, update and delete each leave one row with the changed fields, the admin, the request id and the IP',
  async (t) => {
    let mark = await auditMark(app.db);
    const created = await api('/api/customers', {
      body: { name: 'Audit Co', email: 'audit@example.test', tier: 'starter' },
      headers: { 'x-request-id': 'req-audit-1' },
    });
    t.is(created.status, 201);
    const id = created.body.id;
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'customer.create',
      target_type: 'customer',
      target_id: id,
      actor_email: adminEmail,
      request_id: 'req-audit-1',
      before: null,
    });
    t.deepEqual(row.after, {
      name: 'Audit Co',
      email: 'audit@example.test',
      tier: 'starter',
      taxRateIds: [],
      taxExempt: 'none',
    });
    t.regex(row.ip ?? '', /127\.0\.0\.1/);
    t.regex(row.actor, /^[0-9a-f-]{36}$/);

    mark = await auditMark(app.db);
    t.is(
      (
        await api(`/api/customers/${id}`, {
          method: 'PUT',
          body: { tier: 'enterprise', company: 'Audit Inc', name: 'Audit Co' },
        })
      ).status,
      200,
    );
    await expectOneAudit(t, app.db, mark, {
      action: 'customer.update',
      before: { tier: 'starter', company: null },
      after: { tier: 'enterprise', company: 'Audit Inc' },
    });

    mark = await auditMark(app.db);
    t.is((await api(`/api/customers/${id}`, { method: 'DELETE' })).status, 204);
    const deleted = await expectOneAudit(t, app.db, mark, { action: 'customer.delete', after: null });
    t.like(deleted.before, { name: 'Audit Co', tier: 'enterprise' });
  },
);

test.serial('a refused or invalid write leaves no row', async (t) => {
  const a = (await api('/api/customers', { body: { name: 'A', email: 'a-refused@example.test' } })).body;
  await api('/api/customers', { body: { name: 'B', email: 'b-refused@example.test' } });
  const mark = await auditMark(app.db);
  t.is((await api(`/api/customers/${a.id}`, { method: 'PUT', body: { email: 'B-refused@example.test' } })).status, 409);
  t.is((await api('/api/customers', { body: { name: 'C', email: 'a-refused@example.test' } })).status, 409);
  t.is((await api('/api/customers', { body: { name: '' } })).status, 400);
  t.is(
    (await api('/api/customers/00000000-0000-4000-8000-000000000000', { method: 'PUT', body: { name: 'X' } })).status,
    404,
  );
  await expectNoAudit(t, app.db, mark);
});

test.serial('the log cannot be changed or emptied', async (t) => {
  await api('/api/customers', { body: { name: 'Kept', email: 'kept@example.test' } });
  await t.throwsAsync(app.db('audit_log').update({ action: 'x.y' }), { message: /never changed or removed/ });
  await t.throwsAsync(app.db('audit_log').del(), { message: /never changed or removed/ });
});

test.serial('GET /api/audit-log lists newest first with filters and paging; a bad filter is a 400', async (t) => {
  const ids: string[] = [];
  for (const n of [1, 2, 3])
    ids.push((await api('/api/customers', { body: { name: `Paged ${n}`, email: `paged${n}@example.test` } })).body.id);
  const all = await api(`/api/audit-log?targetType=customer&action=customer.create&limit=2`);
  t.is(all.status, 200);
  t.is(all.body.length, 2);
  t.is(all.body[0].targetId, ids[2]);
  t.is(all.body[1].targetId, ids[1]);
  t.like(all.body[0], { action: 'customer.create', targetType: 'customer', actorEmail: adminEmail, before: null });
  t.regex(all.headers.get('link') ?? '', /startingAfter=/);
  const next = await api(
    `/api/audit-log?targetType=customer&action=customer.create&limit=2&startingAfter=${all.body[1].id}`,
  );
  t.true(next.body.some((e: { targetId: string }) => e.targetId === ids[0]));

  const byTarget = await api(`/api/audit-log?targetType=customer&targetId=${ids[1]}`);
  t.deepEqual(
    byTarget.body.map((e: { targetId: string }) => e.targetId),
    [ids[1]],
  );
  const byEmail = await api(`/api/audit-log?actor=${encodeURIComponent(adminEmail.toUpperCase())}&targetId=${ids[0]}`);
  t.is(byEmail.body.length, 1);
  const byId = await api(`/api/audit-log?actor=${byEmail.body[0].actor}&targetId=${ids[0]}`);
  t.is(byId.body.length, 1);
  t.deepEqual((await api(`/api/audit-log?actor=system&targetId=${ids[0]}`)).body, []);

  t.is((await api('/api/audit-log?targetType=Customer!')).status, 400);
  t.is((await api('/api/audit-log?limit=0')).status, 400);
  t.is((await request(app.baseUrl, '/api/audit-log')).status, 401);
});
