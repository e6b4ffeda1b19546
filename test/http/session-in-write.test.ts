/**
 * Issue 20: POST /api/billing/invoices checks its admin session inside the one statement that writes the invoice
 * (route.ts sessionInWrite). The answers must be those of the separate lookup: 401 without a live session (a logout
 * or an expiry is honoured at once), 403 for another role, whatever the body; and a refused request writes nothing
 * (no number taken, no invoice, line, event or audit row). The audit row of an accepted one names the admin.
 */
import test from 'ava';
import { loginAs, loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
let customerId: string;
test.before(async () => {
  app = await startTestApp();
  [{ id: customerId }] = await app
    .db('customers')
    .insert({ name: 'Gated Writes', email: 'gated-writes@example.test' })
    .returning('id');
});
test.after.always(async () => app?.close());

const draft = () => ({
  customerId,
  taxRate: '8.25',
  lineItems: [{ description: 'Seat', quantity: 2, unitPrice: '10.00' }],
});
const post = (cookie: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  request(app.baseUrl, '/api/billing/invoices', { method: 'POST', body, ...(cookie ? { cookie } : {}), headers });

/** What a refused request must not have written. */
async function written() {
  const count = async (table: string) => Number((await app.db(table).count<{ n: string }[]>('* as n'))[0]!.n);
  const counter = await app.db('document_counters').where({ kind: 'INV' }).first();
  return {
    invoices: await count('invoices'),
    lines: await count('invoice_line_items'),
    events: await count('events'),
    audit: await count('audit_log'),
    seq: counter?.last_seq ?? 0,
  };
}

test.serial("an admin's draft is created, and its audit row names the admin", async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  const created = await post(admin.cookie, draft());
  t.is(created.status, 201);
  const audit = await app.db('audit_log').where({ target_id: created.body.id, action: 'invoice.create' });
  t.is(audit.length, 1);
  const user = await app.db('users').whereRaw('lower(email) = lower(?)', [admin.email]).first();
  t.like(audit[0], { actor: user.id, actor_email: user.email, target_type: 'invoice' });
});

test.serial(
  'without a live session it is 401 and writes nothing, whatever the body; another role is 403',
  async (t) => {
    const before = await written();
    const unknown = `session=${'x'.repeat(43)}`;
    const refused = await post(unknown, draft());
    t.is(refused.status, 401);
    t.deepEqual(refused.body.error, { code: 'unauthenticated', message: 'Session expired or logged out' });
    t.is((await post(unknown, { customerId: 12 })).status, 401, 'invalid fields');
    t.is(
      (await post(unknown, { ...draft(), customerId: '00000000-0000-4000-8000-000000000000' })).status,
      401,
      'an unknown customer',
    );
    t.is(
      (
        await request(app.baseUrl, '/api/billing/invoices', {
          method: 'POST',
          rawBody: '{"customerId":',
          cookie: unknown,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      401,
      'malformed JSON',
    );
    t.is(
      (
        await request(app.baseUrl, '/api/billing/invoices', {
          method: 'POST',
          rawBody: 'x'.repeat(2 * 1024 * 1024),
          cookie: unknown,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      401,
      'too large',
    );
    t.is((await post(`session=${'y'.repeat(300)}`, draft())).status, 401, 'a token too long to be ours');
    t.is((await post(unknown, draft(), { 'idempotency-key': 'gated-1' })).status, 401, 'with an Idempotency-Key');
    t.is((await post(undefined, draft())).body.error.message, 'Log in first: no session cookie');

    const viewer = await loginAs(app.baseUrl, app.db, 'viewer');
    const forbidden = await post(viewer.cookie, draft());
    t.is(forbidden.status, 403);
    t.deepEqual(forbidden.body.error, { code: 'forbidden', message: 'This account is not an admin' });
    t.is((await post(viewer.cookie, { customerId: 12 })).status, 403, 'invalid fields');
    t.is(
      (await post(viewer.cookie, { ...draft(), status: 'issued' })).status,
      403,
      'an issued invoice (its session looked up first)',
    );
    t.deepEqual(await written(), before, 'no number taken, nothing written');

    // The next admin creation takes the next number: no gap.
    const admin = await loginAsAdmin(app.baseUrl, app.db);
    const created = await post(admin.cookie, draft());
    t.is(created.status, 201);
    t.is(created.body.invoiceNumber, `INV-${new Date().getUTCFullYear()}-${String(before.seq + 1).padStart(4, '0')}`);
  },
);

test.serial("an admin's refusals are answered as before", async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  const before = await written();
  const invalid = await post(admin.cookie, { customerId: 12 });
  t.is(invalid.status, 400);
  t.is(invalid.body.error.code, 'invalid_request');
  const unknownCustomer = await post(admin.cookie, { ...draft(), customerId: '00000000-0000-4000-8000-000000000000' });
  t.is(unknownCustomer.status, 400);
  t.is(unknownCustomer.body.error.code, 'customer_not_found');
  const unknownSubscription = await post(admin.cookie, {
    ...draft(),
    subscriptionId: '00000000-0000-4000-8000-000000000000',
  });
  t.is(unknownSubscription.body.error.code, 'subscription_not_found');
  t.deepEqual(await written(), before);
});

test.serial('a logout or an expiry is honoured by the very next creation', async (t) => {
  const admin = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await post(admin.cookie, draft())).status, 201);
  t.is((await request(app.baseUrl, '/api/auth/logout', { method: 'POST', cookie: admin.cookie })).status, 204);
  t.is((await post(admin.cookie, draft())).status, 401);

  const other = await loginAsAdmin(app.baseUrl, app.db);
  t.is((await post(other.cookie, draft())).status, 201);
  await app
    .db('sessions')
    .update({ expires_at: app.db.raw(`now() - interval '1 second'`) })
    .whereIn('user_id', app.db('users').select('id').whereRaw('lower(email) = lower(?)', [other.email]));
  t.is((await post(other.cookie, draft())).status, 401);
});

test.serial(
  'an issued invoice (settings read first) and an Idempotency-Key look the session up first, and audit the admin',
  async (t) => {
    const admin = await loginAsAdmin(app.baseUrl, app.db);
    const user = await app.db('users').whereRaw('lower(email) = lower(?)', [admin.email]).first();
    const issued = await post(admin.cookie, {
      customerId,
      lineItems: [{ description: 'Seat', quantity: 1, unitPrice: '5.00' }],
      status: 'issued',
    });
    t.is(issued.status, 201);
    const keyed = await post(admin.cookie, draft(), { 'idempotency-key': 'gated-2' });
    t.is(keyed.status, 201);
    const replayed = await post(admin.cookie, draft(), { 'idempotency-key': 'gated-2' });
    t.is(replayed.body.id, keyed.body.id);
    for (const id of [issued.body.id, keyed.body.id]) {
      t.like(await app.db('audit_log').where({ target_id: id, action: 'invoice.create' }).first(), {
        actor: user.id,
        actor_email: user.email,
      });
    }
    t.is(
      await app
        .db('audit_log')
        .where({ target_id: keyed.body.id })
        .count<{ n: string }[]>('* as n')
        .then((r) => Number(r[0]!.n)),
      1,
    );
  },
);
