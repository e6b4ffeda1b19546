/**
 * C-11 audit log, on the subscriptions domain: one row per admin write of the API and per console action,
 * with the changed fields before/after; none for a refusal or a write that changed nothing.
 */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { consoleCsrf, loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { auditMark, auditTableText, expectNoAudit, expectOneAudit } from './fixtures.ts';

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
/** A console form post as the browser sends it (its session's CSRF token in the field); answers status and location. */
async function consolePost(path: string, fields: Record<string, string>) {
  const csrf = await consoleCsrf(app.baseUrl, cookie);
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

async function subscribed(planPrice = '30.00', body: Record<string, unknown> = {}) {
  const customer = await insertCustomer(app.db);
  const plan = await makePlan(app.db, planPrice);
  const res = await api('/api/billing/subscriptions', {
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', ...body },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return { customer, plan, sub: res.body as { id: string; currentPeriodEnd: string } };
}

test.serial(
  'API: create, pause, resume, the flag, a combined PUT, change-plan and cancel each leave one row; a PUT that ' +
    'changes nothing leaves one with no field',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const [plan, bigger] = [await makePlan(app.db, '30.00'), await makePlan(app.db, '60.00')];
    let mark = await auditMark(app.db);
    const created = await api('/api/billing/subscriptions', {
      body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
      headers: { 'x-request-id': 'req-sub-1' },
    });
    t.is(created.status, 201);
    const id = created.body.id;
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'subscription.create',
      target_type: 'subscription',
      target_id: id,
      actor_email: adminEmail,
      request_id: 'req-sub-1',
      before: null,
    });
    t.like(row.after, {
      id,
      customerId: customer.id,
      planId: plan.id,
      status: 'active',
      billingCycle: 'monthly',
      cancelAtPeriodEnd: false,
    });

    const put = async (body: Record<string, unknown>) =>
      t.is((await api(`/api/billing/subscriptions/${id}`, { method: 'PUT', body })).status, 200);
    mark = await auditMark(app.db);
    await put({ status: 'paused' });
    const paused = await expectOneAudit(t, app.db, mark, { action: 'subscription.pause', target_id: id });
    t.like(paused.before, { status: 'active', pausedAt: null });
    t.like(paused.after, { status: 'paused' });
    t.regex(String(paused.after!.pausedAt), /^\d{4}-/);

    mark = await auditMark(app.db);
    await put({ status: 'active' });
    await expectOneAudit(t, app.db, mark, {
      action: 'subscription.resume',
      before: { status: 'paused', pausedAt: paused.after!.pausedAt },
      after: { status: 'active', pausedAt: null },
    });

    mark = await auditMark(app.db);
    await put({ cancelAtPeriodEnd: true });
    await expectOneAudit(t, app.db, mark, {
      action: 'subscription.cancel_at_period_end',
      before: { cancelAtPeriodEnd: false },
      after: { cancelAtPeriodEnd: true },
    });

    // Accepted but changing nothing: still the admin's action, recorded with no changed field.
    mark = await auditMark(app.db);
    await put({ status: 'active', cancelAtPeriodEnd: true });
    await expectOneAudit(t, app.db, mark, { action: 'subscription.update', before: {}, after: {} });

    mark = await auditMark(app.db);
    await put({ status: 'paused', cancelAtPeriodEnd: false });
    const both = await expectOneAudit(t, app.db, mark, { action: 'subscription.update' });
    t.like(both.before, { status: 'active', cancelAtPeriodEnd: true });
    t.like(both.after, { status: 'paused', cancelAtPeriodEnd: false });
    await put({ status: 'active' });

    mark = await auditMark(app.db);
    t.is((await api(`/api/billing/subscriptions/${id}/change-plan`, { body: { newPlanId: bigger.id } })).status, 200);
    const changed = await expectOneAudit(t, app.db, mark, {
      action: 'subscription.change_plan',
      before: { planId: plan.id },
    });
    t.is(changed.after!.planId, bigger.id);
    const charge = await app.db('invoices').where({ subscription_id: id }).whereNull('period_start').first();
    const credit = await app.db('credit_ledger').where({ customer_id: customer.id, kind: 'proration' }).first();
    t.is(changed.after!.chargeInvoiceId, charge?.id);
    t.is(changed.after!.prorationCredit, credit?.amount);

    mark = await auditMark(app.db);
    await put({ status: 'canceled', cancelAtPeriodEnd: true });
    const canceled = await expectOneAudit(t, app.db, mark, {
      action: 'subscription.cancel',
      before: { status: 'active', canceledAt: null },
    });
    t.like(canceled.after, { status: 'canceled' });
  },
);

test.serial('API: ending a trial early is subscription.activate', async (t) => {
  const { sub } = await subscribed('30.00', { trialDays: 14 });
  const mark = await auditMark(app.db);
  t.is((await api(`/api/billing/subscriptions/${sub.id}`, { method: 'PUT', body: { status: 'active' } })).status, 200);
  await expectOneAudit(t, app.db, mark, {
    action: 'subscription.activate',
    before: { status: 'trialing' },
    after: { status: 'active' },
  });
});

test.serial('API: refused or invalid writes leave no row', async (t) => {
  const { customer, plan, sub } = await subscribed();
  const euro = await makePlan(app.db, '30.00', 'monthly', 'EUR');
  const dearer = await makePlan(app.db, '45.00');
  const mark = await auditMark(app.db);
  const unknown = '00000000-0000-4000-8000-000000000000';
  t.is(
    (
      await api('/api/billing/subscriptions', {
        body: { customerId: unknown, planId: plan.id, billingCycle: 'monthly' },
      })
    ).status,
    400,
  );
  t.is(
    (
      await api('/api/billing/subscriptions', {
        body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly', couponCode: 'NOPE' },
      })
    ).status,
    400,
  );
  t.is(
    (
      await api('/api/billing/subscriptions', {
        body: { customerId: customer.id, planId: plan.id, billingCycle: 'yearly' },
      })
    ).status,
    400,
  );
  t.is((await api(`/api/billing/subscriptions/${sub.id}`, { method: 'PUT', body: {} })).status, 400);
  t.is((await api(`/api/billing/subscriptions/${unknown}`, { method: 'PUT', body: { status: 'paused' } })).status, 404);
  t.is((await api(`/api/billing/subscriptions/${sub.id}/change-plan`, { body: { newPlanId: plan.id } })).status, 400);
  t.is((await api(`/api/billing/subscriptions/${sub.id}/change-plan`, { body: { newPlanId: euro.id } })).status, 400);
  t.is((await api(`/api/billing/subscriptions/${sub.id}/change-plan`, { body: { newPlanId: unknown } })).status, 400);
  const old = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const stale = await api(`/api/billing/subscriptions/${sub.id}/change-plan`, {
    body: { newPlanId: dearer.id, prorationDate: old },
  });
  t.is(stale.status, 400);
  t.is(stale.body.error.details[0].path, 'prorationDate');
  await expectNoAudit(t, app.db, mark);

  t.is(
    (await api(`/api/billing/subscriptions/${sub.id}`, { method: 'PUT', body: { status: 'canceled' } })).status,
    200,
  );
  const afterCancel = await auditMark(app.db);
  t.is((await api(`/api/billing/subscriptions/${sub.id}`, { method: 'PUT', body: { status: 'active' } })).status, 409);
  t.is((await api(`/api/billing/subscriptions/${sub.id}/change-plan`, { body: { newPlanId: euro.id } })).status, 409);
  await expectNoAudit(t, app.db, afterCancel);
});

test.serial(
  'console: create, each status action, the flag and change-plan leave one row by the signed-in admin; refusals none',
  async (t) => {
    const customer = await insertCustomer(app.db);
    const [plan, bigger] = [await makePlan(app.db, '20.00'), await makePlan(app.db, '40.00')];
    let mark = await auditMark(app.db);
    const created = await consolePost('/admin/subscriptions', {
      _form: 'create-subscription',
      customerId: customer.id,
      planId: plan.id,
      trialDays: '',
      couponCode: '',
    });
    t.is(created.status, 303);
    const id = created.location!.split('/').pop()!;
    const row = await expectOneAudit(t, app.db, mark, {
      action: 'subscription.create',
      target_id: id,
      actor_email: adminEmail,
      before: null,
    });
    t.like(row.after, { planId: plan.id, status: 'active' });

    for (const [status, action] of [
      ['paused', 'subscription.pause'],
      ['active', 'subscription.resume'],
    ] as const) {
      mark = await auditMark(app.db);
      t.is((await consolePost(`/admin/subscriptions/${id}/status`, { _form: 'status', status })).status, 303);
      await expectOneAudit(t, app.db, mark, {
        action,
        actor_email: adminEmail,
        after: { status, ...(status === 'paused' ? {} : { pausedAt: null }) },
      });
    }
    mark = await auditMark(app.db);
    t.is(
      (
        await consolePost(`/admin/subscriptions/${id}/cancel-at-period-end`, {
          _form: 'cancel-at-period-end',
          value: 'true',
        })
      ).status,
      303,
    );
    await expectOneAudit(t, app.db, mark, {
      action: 'subscription.cancel_at_period_end',
      before: { cancelAtPeriodEnd: false },
      after: { cancelAtPeriodEnd: true },
    });

    mark = await auditMark(app.db);
    t.is(
      (
        await consolePost(`/admin/subscriptions/${id}/change-plan`, {
          _form: 'change-plan',
          newPlanId: bigger.id,
          prorate: 'true',
          prorationDate: new Date().toISOString(),
        })
      ).status,
      303,
    );
    await expectOneAudit(t, app.db, mark, { action: 'subscription.change_plan', before: { planId: plan.id } });

    mark = await auditMark(app.db);
    // Cancelling asks first (issue 34): the confirmed post acts.
    const cancel = { _form: 'status', status: 'canceled', confirm: 'yes' };
    t.is((await consolePost(`/admin/subscriptions/${id}/status`, cancel)).status, 303);
    await expectOneAudit(t, app.db, mark, {
      action: 'subscription.cancel',
      before: { status: 'active', cancelAtPeriodEnd: true },
      after: { status: 'canceled', cancelAtPeriodEnd: false },
    });

    mark = await auditMark(app.db);
    t.is((await consolePost(`/admin/subscriptions/${id}/status`, { _form: 'status', status: 'active' })).status, 409);
    t.is(
      (
        await consolePost(`/admin/subscriptions/${id}/cancel-at-period-end`, {
          _form: 'cancel-at-period-end',
          value: 'maybe',
        })
      ).status,
      400,
    );
    t.is(
      (
        await consolePost(`/admin/subscriptions/${id}/change-plan`, {
          _form: 'change-plan',
          newPlanId: plan.id,
          prorate: 'true',
        })
      ).status,
      409,
    );
    t.is(
      (
        await consolePost('/admin/subscriptions', {
          _form: 'create-subscription',
          customerId: customer.id,
          planId: plan.id,
          trialDays: '-1',
        })
      ).status,
      400,
    );
    // Without the CSRF field the post is refused before anything runs.
    const forged = await fetch(`${app.baseUrl}/admin/subscriptions`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `customerId=${customer.id}&planId=${plan.id}`,
    });
    t.is(forged.status, 403);
    await expectNoAudit(t, app.db, mark);
  },
);

test.serial('no secret or session token reaches the table', async (t) => {
  const text = await auditTableText(app.db);
  t.true(text.includes('subscription.create'));
  t.false(text.includes(cookie.split('=')[1]!.split(';')[0]!));
  t.false(text.includes(await consoleCsrf(app.baseUrl, cookie)));
});
