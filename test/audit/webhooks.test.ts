/**
 * C-11 on webhooks and provider events: each admin write through the API or the console leaves one audit row
 * with the changed fields, none when refused, and no endpoint secret ever reaches the table.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { consoleCsrf, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { auditMark, auditTableText, expectNoAudit, expectOneAudit } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let adminEmail: string;
test.before(async () => {
  app = await startTestApp();
  ({ cookie, email: adminEmail } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const base = '/api/billing/webhooks/endpoints';
const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });
/** Every secret an endpoint had in these tests: none may appear in the audit table. */
const secrets = new Set<string>();
const remember = async (id: string) => secrets.add((await app.db('webhook_endpoints').where({ id }).first()).secret);

/** A console form post (C-6) with its session's CSRF token in the field; answers the status. */
async function consolePost(path: string, fields: Record<string, string> = {}): Promise<number> {
  const token = await consoleCsrf(app.baseUrl, cookie);
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, ...fields }),
  });
  return res.status;
}

/** A delivery of a fresh event to the endpoint, failed (as after its last attempt). */
async function failedDelivery(endpointId: string): Promise<string> {
  const eventId = `evt_audit_${Math.random().toString(36).slice(2)}`;
  await app.db('events').insert({ id: eventId, type: 'invoice.created', data: {} });
  const [row] = await app
    .db('webhook_deliveries')
    .insert({ endpoint_id: endpointId, event_id: eventId, status: 'failed', attempt_count: 2, next_attempt_at: null })
    .returning('id');
  return row.id;
}

async function failedProviderEvent(): Promise<string> {
  const [row] = await app
    .db('provider_events')
    .insert({
      provider: 'provider_a',
      event_id: `evt_${Math.random().toString(36).slice(2)}`,
      event_type: 'invoice.paid',
      payload: {},
      status: 'failed',
      failure_reason: 'invoice 1 does not exist',
      attempts: 1,
    })
    .returning('id');
  return row.id;
}

const endpointFields = (body: { url: string; events: string[] }) => ({
  url: body.url,
  events: body.events,
  enabled: true,
});

test.serial(
  'API: create, update, disable, enable, set secret, rotate, redeliver and delete each leave one row; no secret ' +
    'is stored',
  async (t) => {
    let mark = await auditMark(app.db);
    const created = await api(base, {
      body: { url: 'http://127.0.0.1:9/audit', events: ['invoice.paid'] },
      headers: { 'x-request-id': 'req-wh-1' },
    });
    t.is(created.status, 201);
    const id = created.body.id;
    secrets.add(created.body.secret);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.create',
      target_type: 'webhook_endpoint',
      target_id: id,
      actor_email: adminEmail,
      request_id: 'req-wh-1',
      before: null,
    });
    t.deepEqual(row.after, endpointFields(created.body));

    mark = await auditMark(app.db);
    t.is(
      (await api(`${base}/${id}`, { method: 'PUT', body: { url: 'http://127.0.0.1:9/audit-2', events: ['*'] } }))
        .status,
      200,
    );
    await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.update',
      before: { url: 'http://127.0.0.1:9/audit', events: ['invoice.paid'] },
      after: { url: 'http://127.0.0.1:9/audit-2', events: ['*'] },
    });

    mark = await auditMark(app.db);
    t.is((await api(`${base}/${id}`, { method: 'PUT', body: { enabled: false } })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.disable',
      before: { enabled: true },
      after: { enabled: false },
    });
    mark = await auditMark(app.db);
    t.is((await api(`${base}/${id}`, { method: 'PUT', body: { enabled: true } })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.enable',
      before: { enabled: false },
      after: { enabled: true },
    });

    // A secret set outright: the row says when, never what.
    mark = await auditMark(app.db);
    const given = 'given-secret-audit-0123456789';
    secrets.add(given);
    t.is((await api(`${base}/${id}`, { method: 'PUT', body: { secret: given } })).status, 200);
    const set = await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.update',
      before: { rotatedAt: null },
    });
    t.deepEqual(Object.keys(set.after!), ['rotatedAt']);

    mark = await auditMark(app.db);
    const rotated = await api(`${base}/${id}/rotate-secret`, { method: 'POST' });
    t.is(rotated.status, 200, rotated.text);
    secrets.add(rotated.body.secret);
    const rotation = await expectOneAudit(t, app.db, mark, { action: 'webhook_endpoint.rotate_secret', target_id: id });
    t.deepEqual(Object.keys(rotation.after!).sort(), ['previousValidUntil', 'rotatedAt']);
    t.is(rotation.after!.previousValidUntil, rotated.body.previousSecretExpiresAt);

    const deliveryId = await failedDelivery(id);
    mark = await auditMark(app.db);
    t.is((await api(`${base}/${id}/deliveries/${deliveryId}/retry`, { method: 'POST' })).status, 202);
    const redeliver = await expectOneAudit(t, app.db, mark, {
      action: 'webhook_delivery.redeliver',
      target_type: 'webhook_delivery',
      target_id: deliveryId,
      before: { status: 'failed', nextAttemptAt: null },
    });
    t.is(redeliver.after!.status, 'pending');

    mark = await auditMark(app.db);
    t.is((await api(`${base}/${id}`, { method: 'DELETE' })).status, 204);
    const deleted = await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.delete',
      target_id: id,
      after: null,
    });
    t.like(deleted.before, { url: 'http://127.0.0.1:9/audit-2', events: ['*'] });

    const table = await auditTableText(app.db);
    for (const secret of secrets) t.false(table.includes(secret), 'a secret in the audit log');
  },
);

test.serial(
  'API: a provider event replay leaves one row; replaying an applied event changes nothing and leaves one with no ' +
    'field',
  async (t) => {
    const id = await failedProviderEvent();
    let mark = await auditMark(app.db);
    t.is((await api(`/api/billing/provider-events/${id}/replay`, { method: 'POST' })).status, 200);
    await expectOneAudit(t, app.db, mark, {
      action: 'provider_event.replay',
      target_type: 'provider_event',
      target_id: id,
      actor_email: adminEmail,
      before: { status: 'failed', failureReason: 'invoice 1 does not exist' },
      after: { status: 'received', failureReason: null },
    });
    await app.db('provider_events').where({ id }).update({ status: 'processed' });
    mark = await auditMark(app.db);
    t.is((await api(`/api/billing/provider-events/${id}/replay`, { method: 'POST' })).status, 200);
    await expectOneAudit(t, app.db, mark, { action: 'provider_event.replay', target_id: id, before: {}, after: {} });
  },
);

test.serial('API: refused or invalid writes leave no row', async (t) => {
  const endpoint = (await api(base, { body: { url: 'http://127.0.0.1:9/refusals', events: ['invoice.paid'] } })).body;
  secrets.add(endpoint.secret);
  const other = (await api(base, { body: { url: 'http://127.0.0.1:9/other', events: ['invoice.paid'] } })).body;
  secrets.add(other.secret);
  const deliveryId = await failedDelivery(endpoint.id);
  const missing = '00000000-0000-4000-8000-000000000000';
  const mark = await auditMark(app.db);
  t.is((await api(base, { body: { url: 'ftp://127.0.0.1/x', events: ['invoice.paid'] } })).status, 400);
  t.is((await api(base, { body: { url: 'http://127.0.0.1:9/x', events: [] } })).status, 400);
  t.is((await api(`${base}/${endpoint.id}`, { method: 'PUT', body: { events: ['nope'] } })).status, 400);
  t.is((await api(`${base}/${endpoint.id}`, { method: 'PUT', body: { url: 'not a url' } })).status, 400);
  t.is((await api(`${base}/${missing}`, { method: 'PUT', body: { enabled: false } })).status, 404);
  t.is((await api(`${base}/${missing}`, { method: 'DELETE' })).status, 404);
  t.is((await api(`${base}/${missing}/rotate-secret`, { method: 'POST' })).status, 404);
  t.is(
    (await api(`${base}/${other.id}/deliveries/${deliveryId}/retry`, { method: 'POST' })).status,
    404,
    'a delivery of another endpoint',
  );
  t.is((await api(`${base}/${endpoint.id}/deliveries/${missing}/retry`, { method: 'POST' })).status, 404);
  t.is((await api(`/api/billing/provider-events/${missing}/replay`, { method: 'POST' })).status, 404);
  await expectNoAudit(t, app.db, mark);
  // Accepted but changing nothing: still the admin's action, recorded with no changed field.
  const empty = await auditMark(app.db);
  t.is((await api(`${base}/${endpoint.id}`, { method: 'PUT', body: {} })).status, 200, 'an empty PUT changes nothing');
  await expectOneAudit(t, app.db, empty, { action: 'webhook_endpoint.update', before: {}, after: {} });
});

test.serial(
  'console: each action leaves one row by the signed-in admin; a refused one leaves none; no secret is stored',
  async (t) => {
    let mark = await auditMark(app.db);
    t.is(
      await consolePost('/admin/webhooks', { url: 'http://127.0.0.1:9/console', 'events[3]': 'invoice.created' }),
      303,
    );
    const created = await expectOneAudit(t, app.db, mark, {
      action: 'webhook_endpoint.create',
      actor_email: adminEmail,
      before: null,
    });
    const id = created.target_id;
    t.deepEqual(created.after, { url: 'http://127.0.0.1:9/console', events: ['invoice.created'], enabled: true });
    await remember(id);

    const steps: Array<[string, Record<string, string>, string]> = [
      [`/admin/webhooks/${id}`, { url: 'http://127.0.0.1:9/console-2', 'events[0]': '*' }, 'webhook_endpoint.update'],
      // Disabling asks first (issue 34): the confirmed post acts.
      [`/admin/webhooks/${id}/disable`, { confirm: 'yes' }, 'webhook_endpoint.disable'],
      [`/admin/webhooks/${id}/enable`, {}, 'webhook_endpoint.enable'],
      [`/admin/webhooks/${id}/rotate-secret`, {}, 'webhook_endpoint.rotate_secret'],
    ];
    for (const [path, fields, action] of steps) {
      mark = await auditMark(app.db);
      t.is(await consolePost(path, fields), 303, path);
      await expectOneAudit(t, app.db, mark, {
        action,
        target_type: 'webhook_endpoint',
        target_id: id,
        actor_email: adminEmail,
      });
      await remember(id);
    }

    const deliveryId = await failedDelivery(id);
    mark = await auditMark(app.db);
    t.is(await consolePost(`/admin/webhooks/deliveries/${deliveryId}/redeliver`), 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'webhook_delivery.redeliver',
      target_id: deliveryId,
      actor_email: adminEmail,
    });

    const eventId = await failedProviderEvent();
    mark = await auditMark(app.db);
    t.is(await consolePost(`/admin/provider-events/${eventId}/replay`), 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'provider_event.replay',
      target_id: eventId,
      actor_email: adminEmail,
    });

    mark = await auditMark(app.db);
    t.is(await consolePost('/admin/webhooks', { url: 'ftp://127.0.0.1/x', 'events[0]': '*' }), 400);
    t.is(await consolePost(`/admin/webhooks/${id}`, { url: 'http://127.0.0.1:9/x' }), 400, 'no event ticked');
    t.is(await consolePost('/admin/webhooks/00000000-0000-4000-8000-000000000000/rotate-secret'), 404);
    await expectNoAudit(t, app.db, mark);

    mark = await auditMark(app.db);
    t.is(await consolePost(`/admin/webhooks/${id}/delete`), 303);
    await expectOneAudit(t, app.db, mark, { action: 'webhook_endpoint.delete', target_id: id, after: null });

    const table = await auditTableText(app.db);
    t.true(secrets.size >= 6);
    for (const secret of secrets) t.false(table.includes(secret), 'a secret in the audit log');
  },
);
