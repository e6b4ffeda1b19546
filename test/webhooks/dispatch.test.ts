import type http from 'node:http';
import test from 'ava';
import { recordEvents } from '../../src/events/service.ts';
import type { EventType } from '../../src/events/types.ts';
import { DeliveryDispatcher, DISPATCH_LIMITS, type DispatchLimits } from '../../src/webhooks/dispatcher.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from './receiver.ts';

const base = '/api/billing/webhooks/endpoints';
let app: TestApp;
let cookie: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const held: http.ServerResponse[] = [];
const retryAfterSeen = new Set<string>();
/** Endpoints that fail their first two requests (500) and hang on the later ones, which are held here by path. */
const FAILING = ['/failing-1', '/failing-2', '/failing-3'];
const failingHeld = new Map<string, http.ServerResponse[]>(FAILING.map((path) => [path, []]));
const failingSeen = new Map<string, number>();
/** How /shared-health answers now: 500, hang (held here) or 204. */
let sharedHealthMode: 'fail' | 'hang' | 'ok' = 'fail';
const sharedHealthHeld: http.ServerResponse[] = [];

/** Keeps `res` in `held` while its sender waits for it: one the sender gives up on (at its 5 s timeout) leaves. */
function hold(held: http.ServerResponse[], res: http.ServerResponse): void {
  held.push(res);
  res.once('close', () => {
    const at = held.indexOf(res);
    if (at >= 0) held.splice(at, 1);
  });
}

test.before(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2,0.2' });
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  receiver = await startReceiver({
    ...Object.fromEntries(
      FAILING.map((path) => [
        path,
        (_r: http.IncomingMessage, res: http.ServerResponse) => {
          failingSeen.set(path, (failingSeen.get(path) ?? 0) + 1);
          if (failingSeen.get(path)! <= 2) res.writeHead(500).end('down');
          else hold(failingHeld.get(path)!, res);
        },
      ]),
    ),
    '/slow': (_r, res) => held.push(res),
    '/shared-health': (_r, res) => {
      if (sharedHealthMode === 'fail') res.writeHead(500).end('down');
      else if (sharedHealthMode === 'hang') hold(sharedHealthHeld, res);
      else res.writeHead(204).end();
    },
    '/retry-after': (r, res) => {
      const id = String(r.headers['x-event-id']);
      if (retryAfterSeen.has(id)) return res.writeHead(204).end();
      retryAfterSeen.add(id);
      res.writeHead(503, { 'retry-after': '2' }).end('busy');
    },
  });
});
test.after.always(async () => {
  for (const res of [...held, ...sharedHealthHeld, ...[...failingHeld.values()].flat()]) res.destroy();
  await receiver?.close();
  await app?.close();
});

async function endpoint(path: string, events: string[]): Promise<{ id: string }> {
  const res = await request(app.baseUrl, base, { cookie, body: { url: receiver.url(path), events } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

const record = (type: EventType, n: number) =>
  app.db
    .transaction((trx) => recordEvents(trx, [{ type, data: { licenseId: `lic_${n}` } }]))
    .then(([recorded]) => recorded!);

/**
 * Proof that the running dispatcher has claimed since the call: an event for an endpoint of its own, delivered.
 * What was due before it was due for that claim too, so what the claim left alone it chose to leave.
 */
async function claimedSince(path: string, type: EventType): Promise<void> {
  const ep = await endpoint(path, [type]);
  await record(type, 0);
  const delivery = await waitFor(
    () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
    (d) => d?.status === 'delivered',
    10_000,
  );
  if (delivery?.status !== 'delivered') throw new Error(`the delivery to ${path} was not made`);
}

async function dispatching<T>(
  limits: Partial<DispatchLimits>,
  work: (d: DeliveryDispatcher[]) => Promise<T>,
  count = 1,
): Promise<T> {
  const dispatchers = Array.from({ length: count }, () =>
    new DeliveryDispatcher(app.deps, { ...DISPATCH_LIMITS, ...limits }).start(),
  );
  try {
    return await work(dispatchers);
  } finally {
    await Promise.all(dispatchers.map((d) => d.stop()));
  }
}

test.serial(
  'an endpoint that hangs holds at most its per-endpoint share of sends; other endpoints are delivered meanwhile',
  async (t) => {
    await endpoint('/slow', ['dunning.started']);
    const fast = await endpoint('/fast', ['invoice.overdue']);
    // The hanging endpoint's deliveries are the oldest due, more than a claim looks at.
    for (let i = 0; i < 20; i++) await record('dunning.started', i);
    for (let i = 0; i < 10; i++) await record('invoice.overdue', i);
    await dispatching({ concurrency: 4, perEndpoint: 2, pollMs: 60_000 }, async () => {
      await waitFor(
        () => receiver.at('/fast'),
        (r) => r.length >= 10,
        10_000,
      );
      t.is(receiver.at('/fast').length, 10, 'every fast delivery went through while the slow endpoint held its share');
      t.is(receiver.at('/slow').length, 2, 'two sends to the hanging endpoint, no more');
      // The receiver answers before the worker records the attempt: wait for the record, not just the arrival.
      const delivered = await waitFor(
        () =>
          app
            .db('webhook_deliveries')
            .where({ endpoint_id: fast.id, status: 'delivered' })
            .count<{ count: number }[]>('* as count'),
        (rows) => Number(rows[0]!.count) >= 10,
        10_000,
      );
      t.is(Number(delivered[0]!.count), 10);
      // The slow receiver answering frees its share and the rest follow, two at a time.
      while (receiver.at('/slow').length < 20) {
        for (const res of held.splice(0)) res.writeHead(204).end();
        await new Promise((r) => setTimeout(r, 50));
        t.true(held.length <= 2, `in flight to the slow endpoint: ${held.length}`);
      }
      for (const res of held.splice(0)) res.writeHead(204).end();
      const pending = await waitFor(
        () => app.db('webhook_deliveries').where({ status: 'pending' }).select('id'),
        (rows) => rows.length === 0,
        10_000,
      );
      t.deepEqual(pending, []);
    });
  },
);

test.serial(
  'endpoints whose attempts fail get one send each and share the failing slots; a healthy endpoint gets the rest',
  async (t) => {
    const failing: Array<{ id: string }> = [];
    for (const path of FAILING) failing.push(await endpoint(path, ['payment.failed']));
    await endpoint('/healthy', ['payment.succeeded']);
    for (let i = 0; i < 4; i++) await record('payment.failed', i);
    for (let i = 0; i < 30; i++) await record('payment.succeeded', i);
    const limits = {
      concurrency: 8,
      perEndpoint: 4,
      startPerEndpoint: 2,
      failingPerEndpoint: 1,
      failingShare: 2,
      pollMs: 60_000,
    };
    await dispatching(limits, async () => {
      await waitFor(
        () => receiver.at('/healthy'),
        (r) => r.length >= 30,
        10_000,
      );
      // Each failing endpoint: its first two sends (the start allowance) fail; its retries (0.2 s later) are then
      // claimed one at a time and only while the failing ones hold fewer than two slots together.
      const holding = () => FAILING.map((path) => failingHeld.get(path)!.length);
      await waitFor(
        () => holding(),
        (held) => held.reduce((a, b) => a + b, 0) >= 2 && FAILING.every((path) => failingSeen.get(path)! >= 2),
        10_000,
      );
      t.true(
        FAILING.every((path) => failingSeen.get(path)! >= 2),
        'each failing endpoint was tried',
      );
      // The third failing endpoint's deliveries are due, and a claim passes them over.
      await claimedSince('/beside-failing', 'invoice.created');
      t.true(
        holding().every((n) => n <= 1),
        `sends held by a failing endpoint: ${holding().join(', ')}`,
      );
      t.is(
        holding().reduce((a, b) => a + b, 0),
        2,
        'the failing endpoints together held exactly their share',
      );
      // Gone with their deliveries, and the held sends answered, so nothing of them reaches the next tests.
      for (const ep of failing)
        t.is((await request(app.baseUrl, `${base}/${ep.id}`, { cookie, method: 'DELETE' })).status, 204);
      for (const res of [...failingHeld.values()].flat()) res.writeHead(500).end('down');
    });
    t.is(receiver.at('/healthy').length, 30);
  },
);

test.serial(
  'two workers claiming the same backlog send every delivery exactly once, over kept-alive connections',
  async (t) => {
    await endpoint('/shared', ['license.created']);
    const connectionsBefore = receiver.connections();
    const events = [];
    for (let i = 0; i < 120; i++) events.push(await record('license.created', i));
    await dispatching(
      { concurrency: 8, perEndpoint: 8 },
      async () => {
        await waitFor(
          () => receiver.at('/shared'),
          (r) => r.length >= 120,
          20_000,
        );
        await waitFor(
          () => app.db('webhook_deliveries').where({ status: 'pending' }).select('id'),
          (rows) => rows.length === 0,
          10_000,
        );
      },
      2,
    );
    const ids = receiver.at('/shared').map((r) => String(r.headers['x-event-id']));
    t.is(ids.length, 120);
    t.deepEqual([...new Set(ids)].sort(), events.map((e) => e.id).sort());
    const attempts = await app
      .db('webhook_delivery_attempts')
      .join('webhook_deliveries as d', 'd.id', 'delivery_id')
      .where(
        'd.event_id',
        'in',
        events.map((e) => e.id),
      )
      .select('attempt', 'status_code');
    t.is(attempts.length, 120, 'one attempt logged per delivery');
    t.true(attempts.every((a) => a.attempt === 1 && a.status_code === 200));
    t.true(
      receiver.connections() - connectionsBefore <= 16,
      `connections opened: ${receiver.connections() - connectionsBefore}`,
    );
  },
);

test.serial('a backlog for one endpoint drains as fast as the receiver answers, not one claim per poll', async (t) => {
  await endpoint('/burst', ['subscription.updated']);
  for (let i = 0; i < 60; i++) await record('subscription.updated', i);
  // No poll within the test (60 s): claiming once per poll, four at a time, it would not drain in the 10 s waited.
  await dispatching({ concurrency: 8, perEndpoint: 4, pollMs: 60_000 }, async () => {
    await waitFor(
      () => receiver.at('/burst'),
      (r) => r.length >= 60,
      10_000,
    );
    t.is(receiver.at('/burst').length, 60);
  });
});

test.serial('a retry is claimed when it comes due: a longer Retry-After is waited out, not more', async (t) => {
  const ep = await endpoint('/retry-after', ['dunning.resolved']);
  await dispatching({}, async () => {
    const event = await record('dunning.resolved', 1);
    const [first] = await waitFor(
      () => receiver.at('/retry-after'),
      (r) => r.length >= 1,
      5000,
    );
    const firstAt = Date.now();
    t.is(first!.headers['x-event-id'], event.id);
    const delivery = await waitFor(
      () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
      (d) => d.attempt_count === 1,
      5000,
    );
    t.is(delivery.status, 'pending');
    const dueIn = (delivery.next_attempt_at as Date).getTime() - firstAt;
    t.true(dueIn > 1500 && dueIn <= 2100, `due in ${dueIn} ms`);
    await waitFor(
      () => receiver.at('/retry-after'),
      (r) => r.length >= 2,
      5000,
    );
    const late = Date.now() - (delivery.next_attempt_at as Date).getTime();
    t.true(late >= -50 && late < 600, `sent ${late} ms after it came due`);
    const done = await waitFor(
      () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
      (d) => d.status === 'delivered',
      5000,
    );
    t.is(done.attempt_count, 2);
  });
});

test.serial(
  'a delivery whose endpoint was disabled is parked with no next attempt; a manual retry after enabling delivers it',
  async (t) => {
    const ep = await endpoint('/parked', ['license.expired']);
    await record('license.expired', 1);
    const put = await request(app.baseUrl, `${base}/${ep.id}`, { cookie, method: 'PUT', body: { enabled: false } });
    t.is(put.status, 200, put.text);
    await dispatching({}, async () => {
      const parked = await waitFor(
        () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
        (d) => d.next_attempt_at === null,
        5000,
      );
      t.is(parked.status, 'pending');
      t.is(parked.attempt_count, 0);
      await claimedSince('/after-parking', 'invoice.paid');
      t.is(receiver.at('/parked').length, 0, 'parked deliveries are not claimed again');
      await request(app.baseUrl, `${base}/${ep.id}`, { cookie, method: 'PUT', body: { enabled: true } });
      const retried = await request(app.baseUrl, `${base}/${ep.id}/deliveries/${parked.id}/retry`, {
        cookie,
        method: 'POST',
      });
      t.is(retried.status, 202, retried.text);
      await waitFor(
        () => receiver.at('/parked'),
        (r) => r.length >= 1,
        5000,
      );
      const done = await waitFor(
        () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
        (d) => d.status === 'delivered',
        5000,
      );
      t.is(done.attempt_count, 1);
    });
  },
);

test.serial(
  'endpoint health is shared by the webhooks workers: a worker that never sent to a failing endpoint starts it at ' +
    'one send',
  async (t) => {
    const ep = await endpoint('/shared-health', ['dunning.failed']);
    const limits = {
      concurrency: 8,
      perEndpoint: 4,
      startPerEndpoint: 2,
      failingPerEndpoint: 1,
      pollMs: 60_000,
      healthRefreshMs: 0,
    };
    // Worker A: every attempt fails (500) until the schedule (0.2 s, 0.2 s) is spent.
    sharedHealthMode = 'fail';
    await record('dunning.failed', 0);
    await dispatching(limits, async () => {
      await waitFor(
        () => app.db('webhook_deliveries').where({ endpoint_id: ep.id }).first(),
        (d) => d.status === 'failed',
        10_000,
      );
    });
    t.like(await app.db('webhook_endpoint_health').where({ endpoint_id: ep.id }).first(), {
      allowed: 1,
      failing: true,
    });

    // Worker B, a fresh process's memory: the endpoint now hangs. Without the shared health it would start at 2.
    sharedHealthMode = 'hang';
    for (let i = 1; i <= 6; i++) await record('dunning.failed', i);
    await dispatching(limits, async () => {
      await waitFor(
        () => Promise.resolve(sharedHealthHeld.length),
        (n) => n >= 1,
        5000,
      );
      // Five more are due, and a claim passes them over.
      await claimedSince('/beside-shared-health', 'subscription.canceled');
      t.is(sharedHealthHeld.length, 1, 'one send in flight to the endpoint another worker saw failing');
      // It answers again: a success doubles its allowance for every worker.
      sharedHealthMode = 'ok';
      for (const res of sharedHealthHeld.splice(0)) res.writeHead(204).end();
      await waitFor(
        () => app.db('webhook_deliveries').where({ endpoint_id: ep.id, status: 'delivered' }).select('id'),
        (rows) => rows.length === 6,
        10_000,
      );
    });
    const healed = await app.db('webhook_endpoint_health').where({ endpoint_id: ep.id }).first();
    t.false(healed.failing);
    t.true(healed.allowed > 1, `allowed ${healed.allowed}`);
  },
);
