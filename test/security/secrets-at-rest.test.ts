/**
 * Issue 33, item 6: with ENCRYPTION_KEY set, the secrets the service keeps in its database (webhook endpoint
 * secrets, current and previous; the identity provider's client secret; license signing keys) are stored sealed,
 * and everything that uses them still works: deliveries are signed with the plaintext, the IdP login sends it.
 */
import test from 'ava';
import { recordEvents } from '../../src/events/service.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { startFakeOidc, type FakeOidc } from '../helpers/fake-oidc.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { standardWebhookPayload, startReceiver, xSignatureValid } from '../webhooks/receiver.ts';

const ENCRYPTION_KEY = 'test-encryption-key-of-at-least-32-characters';
const base = '/api/billing/webhooks/endpoints';
let app: TestApp;
let cookie: string;
let idp: FakeOidc;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let stopWorkers: () => Promise<void>;

test.before(async () => {
  app = await startTestApp({ ENCRYPTION_KEY });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  idp = await startFakeOidc({ clientSecret: 'idp-client-secret-in-plain' });
  idp.users.set('alice@corp.test', { password: 'alice-pw', email: 'alice@corp.test', roles: ['billing-admin'] });
  receiver = await startReceiver();
  stopWorkers = await registerWorkers(app.boss, app.deps, ['webhooks'], jobHandlers);
});
test.after.always(async () => {
  await stopWorkers?.();
  await receiver?.close();
  await idp?.close();
  await app?.close();
});

const admin = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

test.serial(
  'webhook secrets (current and previous) are stored sealed, and deliveries are signed with their plaintext',
  async (t) => {
    const given = 'whsec_given-secret-of-some-length-0123456789';
    const created = await admin(base, { body: { url: receiver.url('/sealed'), events: ['*'], secret: given } });
    t.is(created.status, 201, created.text);
    t.is(created.body.secret, given, 'the create still answers the plaintext, once');
    const rotated = await admin(`${base}/${created.body.id}/rotate-secret`, { method: 'POST' });
    t.is(rotated.status, 200, rotated.text);
    const fresh = rotated.body.secret as string;

    const { rows } = await app.db.raw('select secret, previous_secret from webhook_endpoints where id = ?', [
      created.body.id,
    ]);
    const stored = rows[0] as { secret: string; previous_secret: string };
    for (const [column, value, plaintext] of [
      ['secret', stored.secret, fresh],
      ['previous_secret', stored.previous_secret, given],
    ] as const) {
      t.false(value.includes(plaintext), `${column} holds its plaintext`);
      t.false(value.includes(plaintext.slice(6)), `${column} holds the secret's body`);
      t.regex(value, /^v2\./, `${column} is an envelope`);
    }
    t.not(stored.secret, stored.previous_secret);

    const [event] = await app.db.transaction((trx) =>
      recordEvents(trx, [{ type: 'dunning.started', data: { invoiceId: 'inv_sealed', attempt: 1 } }]),
    );
    const [got] = await waitFor(
      () => receiver.at('/sealed'),
      (r) => r.length >= 1,
    );
    t.true(xSignatureValid(fresh, got!), 'X-Signature is the new secret');
    t.like(standardWebhookPayload(fresh, got!), { id: event!.id });
    t.like(standardWebhookPayload(given, got!), { id: event!.id }, 'the old secret signs beside it in its grace');
  },
);

test.serial(
  'the identity provider client secret is stored sealed, and the login still sends its plaintext',
  async (t) => {
    const put = await admin('/api/settings', {
      method: 'PUT',
      body: {
        'auth.idp.realm_url': idp.realmUrl,
        'auth.idp.client_id': idp.clientId,
        'auth.idp.client_secret': idp.clientSecret,
        'auth.idp.admin_role': 'billing-admin',
      },
    });
    t.is(put.status, 200, put.text);
    t.is(put.body['auth.idp.client_secret'], '********');
    const { rows } = await app.db.raw(`select value #>> '{}' as value from settings where key = ?`, [
      'auth.idp.client_secret',
    ]);
    t.false(rows[0].value.includes(idp.clientSecret), 'the settings row holds the plaintext');
    t.regex(rows[0].value, /^v2\./);
    t.is((await admin('/api/settings', { method: 'PUT', body: { 'auth.provider': 'idp' } })).status, 200);
    try {
      const login = await request(app.baseUrl, '/api/auth/login', {
        body: { email: 'alice@corp.test', password: 'alice-pw' },
      });
      t.is(login.status, 200, login.text);
      t.is(idp.tokenRequests.at(-1)!.get('client_secret'), idp.clientSecret);
    } finally {
      await admin('/api/settings', { method: 'PUT', body: { 'auth.provider': 'local' } });
    }
  },
);
