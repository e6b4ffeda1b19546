/**
 * POST /api/billing/subscriptions and its admin session: 401 without a live session (a logout or an expiry is
 * honoured at once), 403 for another role, whatever the body; a refused request writes nothing (no subscription, no
 * number taken, no invoice, event, audit or ledger row). The audit row of an accepted one names the admin, on every
 * path (invoiced, store credit spent, trial, coupon, Idempotency-Key).
 */
import test from 'ava';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { makePlan, newCustomer } from './fixtures.ts';

let app: TestApp;
let customerId: string;
let planId: string;
let inactivePlanId: string;
test.before(async () => {
  app = await startTestApp();
  customerId = (await newCustomer(app.db)).id;
  planId = (await makePlan(app.db, '20.00')).id;
  inactivePlanId = (await makePlan(app.db, '7.00')).id;
  await app.db('plans').where({ id: inactivePlanId }).update({ active: false });
});
test.after.always(async () => app?.close());

const body = (extra: Record<string, unknown> = {}) => ({ customerId, planId, billingCycle: 'monthly', ...extra });
const post = (cookie: string | undefined, json: unknown, headers: Record<string, string> = {}) =>
  request(app.baseUrl, '/api/billing/subscriptions', {
    method: 'POST',
    body: json,
    ...(cookie ? { cookie } : {}),
    headers,
  });

/** What a refused request must not have written. */
async function written() {
  const count = async (table: string) => Number((await app.db(table).count<{ n: string }[]>('* as n'))[0]!.n);
  const counter = await app.db('document_counters').where({ kind: 'INV' }).first();
  return {
    subscriptions: await count('subscriptions'),
    invoices: await count('invoices'),
    events: await count('events'),
    audit: await count('audit_log'),
    ledger: await count('credit_ledger'),
    redeemed: Number((await app.db('coupons').sum<{ s: string | null }[]>('times_redeemed as s'))[0]!.s ?? 0),
    seq: counter?.last_seq ?? 0,
  };
}

async function auditOf(subscriptionId: string) {
  return app.db('audit_log').where({ target_id: subscriptionId, action: 'subscription.create' });
}
const userOf = (email: string) => app.db('users').whereRaw('lower(email) = lower(?)', [email]).first();

let couponN = 0;
async function newCoupon(cookie: string): Promise<string> {
  couponN += 1;
  const code = `SIW${couponN}X`;
  const res = await request(app.baseUrl, '/api/billing/coupons', {
    cookie,
    body: { code, percentOff: '10', duration: 'once' },
  });
  if (res.status !== 201) throw new Error(`coupon: ${res.status} ${res.text}`);
  return code;
}

test.serial("an admin's subscription is audited as the admin", async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  const created = await post(admin.cookie, body());
  t.is(created.status, 201, created.text);
  const audit = await auditOf(created.body.id);
  t.is(audit.length, 1);
  const user = await userOf(admin.email);
  t.like(audit[0], { actor: user.id, actor_email: user.email, target_type: 'subscription' });
  t.is((await app.db('invoices').where({ subscription_id: created.body.id })).length, 1);
});

test.serial(
  'without a live session it is 401 and writes nothing, whatever the body; another role is 403',
  async (t) => {
    const admin = await loginAsAdmin(app.baseUrl, app.db);
    const code = await newCoupon(admin.cookie);
    const before = await written();
    const unknown = `session=${'x'.repeat(43)}`;
    const refused = await post(unknown, body());
    t.is(refused.status, 401);
    t.deepEqual(refused.body.error, { code: 'unauthenticated', message: 'Session expired or logged out' });
    t.is((await post(unknown, { customerId: 12 })).status, 401, 'invalid fields');
    t.is(
      (await post(unknown, body({ customerId: '00000000-0000-4000-8000-000000000000' }))).status,
      401,
      'an unknown customer',
    );
    t.is(
      (await post(unknown, body({ planId: '00000000-0000-4000-8000-000000000000' }))).status,
      401,
      'an unknown plan',
    );
    t.is((await post(unknown, body({ planId: inactivePlanId }))).status, 401, 'an inactive plan');
    t.is((await post(unknown, body({ billingCycle: 'yearly' }))).status, 401, 'another cycle');
    t.is((await post(unknown, body({ trialDays: 14 }))).status, 401, 'a trial');
    t.is((await post(unknown, body({ couponCode: code }))).status, 401, 'a coupon');
    t.is(
      (
        await request(app.baseUrl, '/api/billing/subscriptions', {
          method: 'POST',
          rawBody: '{"customerId":',
          cookie: unknown,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      401,
      'malformed JSON',
    );
    t.is((await post(`session=${'y'.repeat(300)}`, body())).status, 401, 'a token too long to be ours');
    t.is((await post(unknown, body(), { 'idempotency-key': 'sub-gated-1' })).status, 401, 'with an Idempotency-Key');
    t.is((await post(undefined, body())).body.error.message, 'Log in first: no session cookie');

    const viewer = await loginAs(app.baseUrl, app.db, 'viewer');
    const forbidden = await post(viewer.cookie, body());
    t.is(forbidden.status, 403);
    t.deepEqual(forbidden.body.error, { code: 'forbidden', message: 'This account is not an admin' });
    t.is((await post(viewer.cookie, { customerId: 12 })).status, 403, 'invalid fields');
    t.is(
      (await post(viewer.cookie, body({ customerId: '00000000-0000-4000-8000-000000000000' }))).status,
      403,
      'an unknown customer',
    );
    t.is((await post(viewer.cookie, body({ trialDays: 3 }))).status, 403, 'a trial (its session looked up first)');
    t.is((await post(viewer.cookie, body({ couponCode: code }))).status, 403, 'a coupon (its session looked up first)');
    t.deepEqual(await written(), before, 'nothing written, no number taken, no coupon redeemed');

    // The next admin creation takes the next number: no gap.
    const created = await post(admin.cookie, body());
    t.is(created.status, 201);
    const invoice = await app.db('invoices').where({ subscription_id: created.body.id }).first();
    t.is(invoice.invoice_number, `INV-${new Date().getUTCFullYear()}-${String(before.seq + 1).padStart(4, '0')}`);
  },
);

test.serial("an admin's refusals are answered as before and write nothing", async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  const before = await written();
  const expect = async (json: unknown, code: string) => {
    const res = await post(admin.cookie, json);
    t.is(res.status, 400, `${code}: ${res.text}`);
    t.is(res.body.error.code, code);
  };
  await expect({ customerId: 12 }, 'invalid_request');
  await expect(body({ customerId: '00000000-0000-4000-8000-000000000000' }), 'customer_not_found');
  await expect(body({ planId: '00000000-0000-4000-8000-000000000000' }), 'plan_not_found');
  await expect(body({ planId: inactivePlanId }), 'plan_inactive');
  await expect(body({ billingCycle: 'yearly' }), 'billing_cycle_mismatch');
  await expect(body({ couponCode: 'NO-SUCH-CODE' }), 'invalid_coupon');
  t.deepEqual(await written(), before);
});

test.serial('a logout or an expiry is honoured by the very next creation', async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await post(admin.cookie, body())).status, 201);
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie: admin.cookie })).status, 204);
  const before = await written();
  t.is((await post(admin.cookie, body())).status, 401);

  const other = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await post(other.cookie, body())).status, 201);
  await app
    .db('sessions')
    .update({ expires_at: app.db.raw(`now() - interval '1 second'`) })
    .whereIn('user_id', app.db('users').select('id').whereRaw('lower(email) = lower(?)', [other.email]));
  const expired = await written();
  t.is((await post(other.cookie, body())).status, 401);
  t.deepEqual(await written(), expired);
  t.is(expired.subscriptions, before.subscriptions + 1);
});

test.serial('store credit spent, a trial, a coupon and an Idempotency-Key each audit the admin once', async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  const user = await userOf(admin.email);
  const credited = (await newCustomer(app.db)).id;
  const grant = await request(app.baseUrl, '/api/billing/credits', {
    cookie: admin.cookie,
    body: { customerId: credited, amount: '5.00', currency: 'USD', description: 'Goodwill' },
  });
  t.is(grant.status, 201, grant.text);
  const spent = await post(admin.cookie, body({ customerId: credited }));
  t.is(spent.status, 201, spent.text);
  t.is(Number((await app.db('invoices').where({ subscription_id: spent.body.id }).first()).credit_applied), 5);
  const trial = await post(admin.cookie, body({ trialDays: 7 }));
  t.is(trial.status, 201, trial.text);
  const coupon = await post(admin.cookie, body({ couponCode: await newCoupon(admin.cookie) }));
  t.is(coupon.status, 201, coupon.text);
  const keyed = await post(admin.cookie, body(), { 'idempotency-key': 'sub-gated-2' });
  t.is(keyed.status, 201, keyed.text);
  t.is((await post(admin.cookie, body(), { 'idempotency-key': 'sub-gated-2' })).body.id, keyed.body.id);
  for (const created of [spent, trial, coupon, keyed]) {
    const audit = await auditOf(created.body.id);
    t.is(audit.length, 1);
    t.like(audit[0], { actor: user.id, actor_email: user.email });
  }
});
