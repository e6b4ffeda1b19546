import test from 'ava';
import { recordEvents } from '../../src/events/service.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import { line } from '../invoices/fixtures.ts';
import { waitFor } from '../helpers/wait.ts';
import { standardWebhookPayload, startReceiver, xSignatureValid, type Received } from './receiver.ts';

const base = '/api/billing/webhooks/endpoints';
let app: TestApp;
let cookie: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const flakyFailures = new Map<string, number>();
const hanging: Array<() => void> = [];
/** Requests to /hang whose connection has closed (the sender gave up on them). */
let hangsGivenUp = 0;
let stopWorkers: () => Promise<void>;

test.before(async () => {
  // A short schedule: three attempts in all, a fraction of a second apart.
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2,0.2' });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  receiver = await startReceiver({
    '/flaky': (r, res) => {
      const id = String(r.headers['webhook-id']);
      const seen = (flakyFailures.get(id) ?? 0) + 1;
      flakyFailures.set(id, seen);
      if (seen <= 2) res.writeHead(500).end('temporarily broken');
      else res.writeHead(204).end();
    },
    '/redirect': (_r, res) => res.writeHead(302, { location: receiver.url('/ok-target') }).end(),
    '/hang': (_r, res) => {
      res.once('close', () => hangsGivenUp++);
      hanging.push(() => res.destroy());
    },
    '/big-error': (_r, res) => res.writeHead(503).end('x'.repeat(5000)),
  });
  stopWorkers = await registerWorkers(app.boss, app.deps, ['webhooks'], jobHandlers);
});
test.after.always(async () => {
  for (const release of hanging) release();
  await stopWorkers?.();
  await receiver?.close();
  await app?.close();
});

const admin = (path: string, options: Parameters<typeof request>[2] = {}) =>
  request(app.baseUrl, path, { cookie, ...options });

async function endpoint(path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await admin(base, { body: { url: receiver.url(path), events } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

async function deliveries(endpointId: string) {
  const res = await admin(`${base}/${endpointId}/deliveries`);
  if (res.status !== 200) throw new Error(res.text);
  return res.body as Array<{
    id: string;
    eventId: string;
    eventType: string;
    status: string;
    attemptCount: number;
    attempts: Array<{
      attempt: number;
      statusCode: number | null;
      latencyMs: number;
      error: string | null;
      responseBody: string | null;
    }>;
  }>;
}

function verifyBoth(t: import('ava').ExecutionContext, secret: string, r: Received) {
  t.true(xSignatureValid(secret, r), 'X-Signature');
  const payload = standardWebhookPayload(secret, r) as { id: string; type: string; createdAt: string; data: unknown };
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.headers['x-event-id'], payload.id);
  t.is(r.headers['webhook-id'], payload.id);
  t.is(r.headers['x-event-type'], payload.type);
  t.true(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
  t.regex(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
  return payload;
}

test.serial(
  'license, invoice and payment events reach a subscribed receiver signed, verified by hand and by standardwebhooks',
  async (t) => {
    const all = await endpoint('/all', ['*']);
    const onlyPaid = await endpoint('/paid', ['invoice.paid']);

    const customer = await insertCustomer(app.db);
    const product = await admin('/api/products', { body: { name: 'Suite', productType: 'licensed', price: '10.00' } });
    const license = await admin('/api/licenses', { body: { customerId: customer.id, productId: product.body.id } });
    t.is(license.status, 201, license.text);
    const invoice = await admin('/api/billing/invoices', {
      body: { customerId: customer.id, lineItems: [line('25.00')], currency: 'USD', status: 'issued' },
    });
    t.is(invoice.status, 201, invoice.text);
    const payment = await admin('/api/billing/payments', {
      body: {
        invoiceId: invoice.body.id,
        amount: invoice.body.amountDue ?? invoice.body.total ?? '25.00',
        paymentMethod: 'manual',
      },
    });
    t.true(payment.status === 201 || payment.status === 200, payment.text);

    const expected = (await app.db('events').orderBy('created_at').select('id', 'type')) as {
      id: string;
      type: string;
    }[];
    const types = expected.map((e) => e.type);
    for (const type of ['license.created', 'invoice.created', 'payment.succeeded', 'invoice.paid'])
      t.true(types.includes(type), `${type} in ${types}`);

    const got = await waitFor(
      () => receiver.at('/all'),
      (r) => r.length >= expected.length,
    );
    t.is(got.length, expected.length);
    const payloads = got.map((r) => verifyBoth(t, all.secret, r));
    t.deepEqual(payloads.map((p) => p.id).sort(), expected.map((e) => e.id).sort());
    const licenseEvent = payloads.find((p) => p.type === 'license.created')!;
    t.like(licenseEvent.data as object, { licenseId: license.body.id, customerId: customer.id });
    // The body is the envelope exactly: id, type, createdAt, data.
    t.deepEqual(Object.keys(JSON.parse(got[0]!.body)), ['id', 'type', 'createdAt', 'data']);

    const paid = await waitFor(
      () => receiver.at('/paid'),
      (r) => r.length >= 1,
    );
    t.is(paid.length, 1);
    t.is(verifyBoth(t, onlyPaid.secret, paid[0]!).type, 'invoice.paid');

    const log = await waitFor(
      () => deliveries(all.id),
      (d) => d.every((x) => x.status === 'delivered'),
    );
    t.is(log.length, expected.length);
    for (const d of log) {
      t.is(d.attemptCount, 1);
      t.is(d.attempts.length, 1);
      t.is(d.attempts[0]!.statusCode, 200);
      t.is(d.attempts[0]!.responseBody, 'ok');
    }
  },
);

test.serial(
  'a receiver failing twice then succeeding: three attempts logged, one success, the same event id each time',
  async (t) => {
    const ep = await endpoint('/flaky', ['dunning.started']);
    const event = await app.db
      .transaction((trx) => recordEvents(trx, [{ type: 'dunning.started', data: { invoiceId: 'inv_1', attempt: 1 } }]))
      .then(([recorded]) => recorded!);
    const got = await waitFor(
      () => receiver.at('/flaky'),
      (r) => r.length >= 3,
    );
    t.is(got.length, 3);
    for (const r of got) {
      verifyBoth(t, ep.secret, r);
      t.is(r.headers['x-event-id'], event.id);
    }
    t.is(new Set(got.map((r) => r.body)).size, 1, 'the same body bytes each time');
    const [delivery] = await waitFor(
      () => deliveries(ep.id),
      (d) => d[0]?.status === 'delivered',
    );
    t.is(delivery!.status, 'delivered');
    t.is(delivery!.eventId, event.id);
    t.deepEqual(
      delivery!.attempts.map((a) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 500],
        [3, 204],
      ],
    );
    t.is(delivery!.attempts[0]!.responseBody, 'temporarily broken');
    t.true(delivery!.attempts.every((a) => a.latencyMs >= 0));
    // Delivered is final: no worker claims the delivery again, so what the receiver has now is all it gets.
    t.is(receiver.at('/flaky').length, 3, 'nothing more after the success');
  },
);

test.serial(
  'a redirect is a failure and is never followed; after the schedule the delivery is failed; retry redelivers',
  async (t) => {
    const ep = await endpoint('/redirect', ['dunning.failed']);
    await app.db.transaction((trx) => recordEvents(trx, [{ type: 'dunning.failed', data: { invoiceId: 'inv_2' } }]));
    const [delivery] = await waitFor(
      () => deliveries(ep.id),
      (d) => d[0]?.status === 'failed',
    );
    t.is(delivery!.status, 'failed');
    t.is(delivery!.attempts.length, 3);
    for (const a of delivery!.attempts) {
      t.is(a.statusCode, 302);
      t.regex(a.error!, /redirect.*not followed/);
    }
    t.is(receiver.at('/ok-target').length, 0);

    const retried = await admin(`${base}/${ep.id}/deliveries/${delivery!.id}/retry`, { method: 'POST' });
    t.is(retried.status, 202, retried.text);
    t.is(retried.body.status, 'pending');
    const [after] = await waitFor(
      () => deliveries(ep.id),
      (d) => d[0]!.attempts.length === 4 && d[0]!.status === 'failed',
    );
    t.is(after!.attempts.length, 4);
    t.is(receiver.at('/redirect').length, 4);

    const unknown = await admin(`${base}/${ep.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`, {
      method: 'POST',
    });
    t.is(unknown.status, 404);
  },
);

test.serial('a hanging receiver times out after 5 s without holding up another endpoint', async (t) => {
  const slow = await endpoint('/hang', ['subscription.canceled']);
  const fast = await endpoint('/fast', ['subscription.canceled']);
  await app.db.transaction((trx) => recordEvents(trx, [{ type: 'subscription.canceled', data: { id: 'sub_1' } }]));
  await waitFor(
    () => receiver.at('/fast'),
    (r) => r.length >= 1,
  );
  t.is(receiver.at('/fast').length, 1);
  t.is(hangsGivenUp, 0, 'the fast endpoint is not behind the hanging one: that send has not even timed out yet');
  const [delivery] = await waitFor(
    () => deliveries(slow.id),
    (d) => (d[0]?.attempts.length ?? 0) >= 1,
    15_000,
  );
  const attempt = delivery!.attempts[0]!;
  t.is(attempt.statusCode, null);
  t.regex(attempt.error!, /timeout/);
  t.true(attempt.latencyMs >= 4900 && attempt.latencyMs < 7000, String(attempt.latencyMs));
  t.is(
    await waitFor(
      () => hangsGivenUp,
      (n) => n > 0,
    ),
    1,
    'the receiver sees a send given up when it is',
  );
  t.is((await deliveries(fast.id))[0]!.status, 'delivered');
  await admin(`${base}/${slow.id}`, { method: 'DELETE' });
});

test.serial('response bodies are kept to 1 KiB; disabled and unsubscribed endpoints get nothing', async (t) => {
  const big = await endpoint('/big-error', ['payment.failed']);
  const disabled = await endpoint('/disabled', ['payment.failed']);
  await admin(`${base}/${disabled.id}`, { method: 'PUT', body: { enabled: false } });
  const other = await endpoint('/other', ['invoice.overdue']);
  await app.db.transaction((trx) => recordEvents(trx, [{ type: 'payment.failed', data: { paymentId: 'p1' } }]));
  const [delivery] = await waitFor(
    () => deliveries(big.id),
    (d) => d[0]?.status === 'failed',
  );
  t.is(delivery!.attempts[0]!.statusCode, 503);
  t.is(delivery!.attempts[0]!.responseBody!.length, 1024);
  t.deepEqual(await deliveries(disabled.id), []);
  t.deepEqual(await deliveries(other.id), []);
  t.is(receiver.at('/disabled').length + receiver.at('/other').length, 0);
});

test.serial('an event in a rolled-back transaction creates no delivery and sends nothing', async (t) => {
  const ep = await endpoint('/rollback', ['license.expired']);
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      await recordEvents(trx, [{ type: 'license.expired', data: { licenseId: 'l1' } }]);
      throw new Error('roll back');
    }),
  );
  // The same event committed after it: once its delivery is final, the rolled-back one had its chance to be sent.
  const [committed] = await app.db.transaction((trx) =>
    recordEvents(trx, [{ type: 'license.expired', data: { licenseId: 'l2' } }]),
  );
  const log = await waitFor(
    () => deliveries(ep.id),
    (d) => d.length > 0 && d.every((x) => x.status === 'delivered'),
  );
  t.deepEqual(
    log.map((d) => d.eventId),
    [committed!.id],
  );
  t.deepEqual(
    receiver.at('/rollback').map((r) => r.headers['x-event-id']),
    [committed!.id],
  );
});
