/**
 * C-11 audit log on settings, API keys and the lifecycle sweep: one row per admin write (API or console),
 * none when refused, never an API key or its hash in the table, and the sweep's changes recorded as `system`.
 */
import test from 'ava';
import { sha256Hex } from '../../src/crypto/tokens.ts';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { makeInvoice } from '../payments/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { CRON_SECRET } from '../lifecycle/fixtures.ts';
import { auditMark, auditSince, auditTableText, expectNoAudit, expectOneAudit } from './fixtures.ts';

let app: TestApp;
let cookie: string;
let adminEmail: string;
test.before(async () => {
  app = await startTestApp({ CRON_SECRET });
  ({ cookie, email: adminEmail } = await loginAsAdmin(app.baseUrl, app.db));
});
test.after.always(async () => app?.close());

const api = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

/** A console form post over HTTP: the CSRF token read from the page, as a browser would send it. */
async function consolePost(
  page: string,
  action: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: string | null; html: string }> {
  const got = await fetch(`${app.baseUrl}${page}`, { headers: { cookie } });
  const token = /name="_csrf" value="([^"]+)"/.exec(await got.text())![1]!;
  const res = await fetch(`${app.baseUrl}${action}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      'content-type': 'application/x-www-form-urlencoded',
      'x-request-id': 'req-console-ops',
    },
    body: new URLSearchParams({ _csrf: token, ...fields }),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

test.serial(
  'PUT /api/settings: one setting.update row with only the changed keys; a refused change leaves none',
  async (t) => {
    let mark = await auditMark(app.db);
    const res = await api('/api/settings', {
      method: 'PUT',
      body: { 'billing.payment_terms_days': 30, 'company.name': 'Your Company' },
      headers: { 'x-request-id': 'req-settings-1' },
    });
    t.is(res.status, 200, res.text);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'setting.update',
      target_type: 'setting',
      target_id: 'billing.payment_terms_days',
      actor_email: adminEmail,
      request_id: 'req-settings-1',
    });
    t.deepEqual(row.before, { settings: { 'billing.payment_terms_days': 14 } });
    t.deepEqual(row.after, { settings: { 'billing.payment_terms_days': 30 } });

    mark = await auditMark(app.db);
    t.is((await api('/api/settings', { method: 'PUT', body: { 'billing.payment_terms_days': -1 } })).status, 400);
    t.is((await api('/api/settings', { method: 'PUT', body: { 'no.such': 1 } })).status, 400);
    t.is((await api('/api/settings', { method: 'PUT', body: { 'auth.provider': 'idp' } })).status, 400);
    await expectNoAudit(t, app.db, mark);

    // A secret setting is recorded as changed, never with its value.
    mark = await auditMark(app.db);
    t.is(
      (
        await api('/api/settings', {
          method: 'PUT',
          body: { 'auth.idp.client_secret': 'very-secret-idp-value', 'company.name': 'Ops Co' },
        })
      ).status,
      200,
    );
    const secret = await expectOneAudit(t, app.db, mark, { target_id: 'auth.idp.client_secret,company.name' });
    t.deepEqual(secret.after, { settings: { 'auth.idp.client_secret': '[redacted]', 'company.name': 'Ops Co' } });
    t.false((await auditTableText(app.db)).includes('very-secret-idp-value'));
  },
);

test.serial(
  'API keys: create and revoke each leave one row without the key or its hash; a refused one none',
  async (t) => {
    const customer = await insertCustomer(app.db);
    let mark = await auditMark(app.db);
    const created = await api('/api/api-keys', { body: { name: 'CI key', customerId: customer.id } });
    t.is(created.status, 201, created.text);
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'api_key.create',
      target_type: 'api_key',
      target_id: created.body.id,
      before: null,
    });
    t.deepEqual(row.after, {
      id: created.body.id,
      name: 'CI key',
      customerId: customer.id,
      prefix: created.body.prefix,
    });

    mark = await auditMark(app.db);
    t.is((await api(`/api/api-keys/${created.body.id}`, { method: 'DELETE' })).status, 204);
    const revoked = await expectOneAudit(t, app.db, mark, {
      action: 'api_key.revoke',
      target_id: created.body.id,
      before: { revokedAt: null },
    });
    t.regex(String(revoked.after?.revokedAt), /^\d{4}-\d\d-\d\dT/);

    mark = await auditMark(app.db);
    t.is((await api(`/api/api-keys/${created.body.id}`, { method: 'DELETE' })).status, 404);
    t.is(
      (await api('/api/api-keys', { body: { name: 'x', customerId: '00000000-0000-4000-8000-000000000000' } })).status,
      400,
    );
    t.is((await api('/api/api-keys', { body: { name: '', customerId: customer.id } })).status, 400);
    t.is(
      (
        await api('/api/api-keys', {
          body: { name: 'past', customerId: customer.id, expiresAt: '2001-01-01T00:00:00Z' },
        })
      ).status,
      400,
    );
    await expectNoAudit(t, app.db, mark);

    const text = await auditTableText(app.db);
    t.false(text.includes(created.body.key));
    t.false(text.includes(sha256Hex(created.body.key)));
  },
);

test.serial(
  'console actions: settings, API key create and revoke each leave one row by the admin; refusals none; the key ' +
    'never in the table',
  async (t) => {
    const customer = await insertCustomer(app.db);
    let mark = await auditMark(app.db);
    const saved = await consolePost('/admin/settings', '/admin/settings', {
      _form: 'settings',
      'billing.payment_terms_days': '21',
      'company.name': 'Ops Co',
    });
    t.is(saved.status, 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'setting.update',
      target_id: 'billing.payment_terms_days',
      actor_email: adminEmail,
      request_id: 'req-console-ops',
      after: { settings: { 'billing.payment_terms_days': 21 } },
    });

    mark = await auditMark(app.db);
    const refused = await consolePost('/admin/settings', '/admin/settings', {
      _form: 'settings',
      'billing.payment_terms_days': 'soon',
    });
    t.is(refused.status, 400);
    t.regex(refused.html, /billing\.payment_terms_days/);
    t.is(
      (
        await consolePost('/admin/settings', '/admin/api-keys', {
          _form: 'api-key-create',
          name: '',
          customerId: customer.id,
        })
      ).status,
      400,
    );
    await expectNoAudit(t, app.db, mark);

    mark = await auditMark(app.db);
    const created = await consolePost('/admin/settings', '/admin/api-keys', {
      _form: 'api-key-create',
      name: 'Console key',
      customerId: customer.id,
    });
    t.is(created.status, 303);
    const row = await expectOneAudit(t, app.db, mark, { action: 'api_key.create', actor_email: adminEmail });
    const key = await app.db('api_keys').where({ id: row.target_id }).first();
    t.is(key.name, 'Console key');

    mark = await auditMark(app.db);
    t.is(
      (await consolePost('/admin/settings', `/admin/api-keys/${key.id}/revoke`, { _form: 'api-key-revoke' })).status,
      303,
    );
    await expectOneAudit(t, app.db, mark, { action: 'api_key.revoke', target_id: key.id, actor_email: adminEmail });
    mark = await auditMark(app.db);
    t.is(
      (await consolePost('/admin/settings', `/admin/api-keys/${key.id}/revoke`, { _form: 'api-key-revoke' })).status,
      404,
    );
    await expectNoAudit(t, app.db, mark);
    t.false((await auditTableText(app.db)).includes(key.key_hash));
  },
);

test.serial(
  'a sweep request is one lifecycle.run row: the admin from the console, system from the cron endpoint',
  async (t) => {
    let mark = await auditMark(app.db);
    t.is((await consolePost('/admin/lifecycle', '/admin/lifecycle/run', { _form: 'run' })).status, 303);
    const run = await app.db('lifecycle_runs').orderBy('created_at', 'desc').first();
    await expectOneAudit(t, app.db, mark, {
      action: 'lifecycle.run',
      target_type: 'lifecycle_run',
      target_id: run.id,
      actor_email: adminEmail,
      after: { status: 'queued', joined: false },
    });

    mark = await auditMark(app.db);
    const cron = await request(app.baseUrl, '/api/billing/cron/lifecycle', {
      method: 'POST',
      headers: { 'x-cron-secret': CRON_SECRET },
      body: {},
    });
    t.is(cron.status, 202, cron.text);
    await expectOneAudit(t, app.db, mark, {
      action: 'lifecycle.run',
      target_id: run.id,
      actor: 'system',
      actor_email: null,
      after: { status: 'queued', joined: true },
    });
    // Close the run so it does not hold the open-run slot (no worker runs in this file).
    await app
      .db('lifecycle_runs')
      .where({ id: run.id })
      .update({ status: 'failed', error: 'closed by the test', finished_at: new Date() });

    mark = await auditMark(app.db);
    t.is(
      (
        await request(app.baseUrl, '/api/billing/cron/lifecycle', {
          method: 'POST',
          headers: { 'x-cron-secret': 'wrong' },
          body: {},
        })
      ).status,
      401,
    );
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial(
  'the sweep records each change as system: renewals with their invoices, a trial ending, a cancellation, an ' +
    'overdue invoice, an expired license, a dunning end',
  async (t) => {
    const db = app.db;
    const customer = await insertCustomer(db);
    const plan = await makePlan(db, '10.00');
    const day = (s: string) => new Date(`${s}T00:00:00.000Z`);
    const sub = (fields: Record<string, unknown>) =>
      db('subscriptions')
        .insert({
          customer_id: customer.id,
          plan_id: plan.id,
          status: 'active',
          billing_cycle: 'monthly',
          billing_anchor: day('2025-01-01'),
          period_number: 0,
          current_period_start: day('2025-01-01'),
          current_period_end: day('2025-02-01'),
          ...fields,
        })
        .returning('*')
        .then((rows) => rows[0]);
    const renewing = await sub({});
    const trial = await sub({
      status: 'trialing',
      period_number: -1,
      billing_anchor: day('2025-02-01'),
      current_period_start: day('2025-01-18'),
      current_period_end: day('2025-02-01'),
      trial_end: day('2025-02-01'),
    });
    const ending = await sub({ cancel_at_period_end: true });
    const dunned = await sub({ status: 'past_due' });
    const overdue = await makeInvoice({ baseUrl: app.baseUrl, cookie, db }, { customerId: customer.id });
    await db('invoices')
      .where({ id: overdue.id })
      .update({ due_date: day('2025-01-20'), subscription_id: dunned.id });
    // The last retry of the schedule is due and the customer has no card: the case fails and the subscription is
    // canceled.
    await db('dunning_cases').insert({
      invoice_id: overdue.id,
      subscription_id: dunned.id,
      customer_id: customer.id,
      attempt: 4,
      next_attempt_at: day('2025-02-01'),
      started_at: day('2025-01-21'),
    });
    const [product] = await db('products')
      .insert({ name: 'Licensed', product_type: 'saas', price: '1' })
      .returning('id');
    await db('licenses').insert({
      license_key: 'LIC-AUDIT-EXPIRE',
      customer_id: customer.id,
      product_id: product.id,
      expires_at: day('2025-01-31'),
    });

    const mark = await auditMark(db);
    const summary = await runLifecycleSweep(app.deps, day('2025-02-02'));
    t.like(summary, {
      periodsAdvanced: 3,
      trialsEnded: 1,
      canceled: 1,
      invoicesOverdue: 1,
      licensesExpired: 1,
      dunningFailed: 1,
      errors: 0,
    });
    const rows = await auditSince(db, mark);
    t.true(
      rows.every((r) => r.actor === 'system' && r.actor_email === null),
      JSON.stringify(rows.map((r) => r.actor)),
    );
    const of = (targetId: string) =>
      rows.filter((r) => r.target_id === targetId).map((r) => ({ action: r.action, before: r.before, after: r.after }));

    const renewalInvoice = await db('invoices').where({ subscription_id: renewing.id }).first();
    t.deepEqual(of(renewing.id), [
      {
        action: 'subscription.renew',
        before: {
          periodNumber: 0,
          currentPeriodStart: '2025-01-01T00:00:00.000Z',
          currentPeriodEnd: '2025-02-01T00:00:00.000Z',
        },
        after: {
          periodNumber: 1,
          currentPeriodStart: '2025-02-01T00:00:00.000Z',
          currentPeriodEnd: '2025-03-01T00:00:00.000Z',
          invoiceIds: [renewalInvoice.id],
        },
      },
    ]);
    t.like(of(trial.id)[0], {
      action: 'subscription.renew',
      before: { status: 'trialing' },
      after: { status: 'active' },
    });
    t.like(of(ending.id)[0], {
      action: 'subscription.cancel',
      before: { status: 'active', cancelAtPeriodEnd: true, canceledAt: null },
      after: { status: 'canceled', cancelAtPeriodEnd: false },
    });
    t.deepEqual(of(overdue.id), [
      { action: 'invoice.overdue', before: { status: 'issued' }, after: { status: 'overdue' } },
    ]);
    t.deepEqual(of('LIC-AUDIT-EXPIRE'), [
      { action: 'license.expire', before: { status: 'active' }, after: { status: 'expired' } },
    ]);
    t.like(
      of(dunned.id).find((r) => r.action === 'subscription.cancel'),
      { before: { status: 'past_due' }, after: { status: 'canceled' } },
    );

    // A second sweep as of the same instant changes nothing and records nothing.
    const again = await auditMark(db);
    await runLifecycleSweep(app.deps, day('2025-02-02'));
    await expectNoAudit(t, db, again);
  },
);
