import test from 'ava';
import { pinnedLookup } from '../../src/webhooks/destination.ts';
import { isBlockedAddress } from '../../src/webhooks/public-address.ts';
import {
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  nextAttemptDelayMs,
  parseRetryAfter,
  retrySchedule,
} from '../../src/webhooks/retry-schedule.ts';
import { postWebhook } from '../../src/webhooks/send.ts';
import { signatureHeaders } from '../../src/webhooks/sign.ts';
import { standardWebhookPayload, startReceiver, xSignatureValid } from './receiver.ts';

test('blocked and allowed addresses (D-73)', (t) => {
  for (const a of [
    '127.0.0.1',
    '127.8.9.1',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '224.0.0.1',
    'not-an-ip',
  ])
    t.true(isBlockedAddress(a), a);
  for (const a of [
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
  ])
    t.false(isBlockedAddress(a), a);
});

test('the pinned lookup answers only the checked address, for single and all-address lookups', (t) => {
  const lookup = pinnedLookup({ address: '93.184.215.14', family: 4 }) as unknown as (
    h: string,
    o: object,
    cb: (...a: unknown[]) => void,
  ) => void;
  lookup('evil.example', {}, (...args) => t.deepEqual(args, [null, '93.184.215.14', 4]));
  lookup('evil.example', { all: true }, (...args) =>
    t.deepEqual(args, [null, [{ address: '93.184.215.14', family: 4 }]]),
  );
});

test('the send-time check refuses a loopback destination without connecting', async (t) => {
  const receiver = await startReceiver();
  try {
    const outcome = await postWebhook(receiver.url('/x'), '{}', {}, { allowPrivate: false });
    t.false(outcome.ok);
    t.is(outcome.statusCode, null);
    t.regex(outcome.error!, /destination refused.*127\.0\.0\.1/);
    t.is(receiver.received.length, 0);
    t.true((await postWebhook(receiver.url('/x'), '{}', {}, { allowPrivate: true })).ok);
  } finally {
    await receiver.close();
  }
});

test('a reset connection is a failed attempt with the error', async (t) => {
  const receiver = await startReceiver({ '/reset': (_r, res) => res.socket!.destroy() });
  try {
    const outcome = await postWebhook(receiver.url('/reset'), '{}', {}, { allowPrivate: true });
    t.false(outcome.ok);
    t.regex(outcome.error!, /ECONNRESET|socket hang up/);
  } finally {
    await receiver.close();
  }
});

test(
  'connections are kept alive; ' + 'one the receiver dropped while it idled is sent on a new connection, not failed',
  async (t) => {
    const served = new WeakSet<object>();
    const receiver = await startReceiver({
      '/once-per-connection': (_r, res) => {
        // The second request on a connection finds it closed, as when a receiver's keep-alive timeout races a send.
        if (served.has(res.socket!)) return res.socket!.destroy();
        served.add(res.socket!);
        res.writeHead(200).end('ok');
      },
      '/ok': (_r, res) => res.writeHead(200).end('ok'),
    });
    try {
      for (let i = 0; i < 3; i++) t.true((await postWebhook(receiver.url('/ok'), '{}', {}, { allowPrivate: true })).ok);
      t.is(receiver.connections(), 1, 'three sequential sends, one connection');
      const first = await postWebhook(receiver.url('/once-per-connection'), '{}', {}, { allowPrivate: true });
      t.true(first.ok, first.error ?? '');
      const second = await postWebhook(receiver.url('/once-per-connection'), '{}', {}, { allowPrivate: true });
      t.true(second.ok, second.error ?? '');
      t.is(second.statusCode, 200);
      t.is(receiver.connections(), 2);
    } finally {
      await receiver.close();
    }
  },
);

test('signature headers verify by hand and with standardwebhooks, for a generated whsec_ secret', (t) => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'invoice.paid',
    createdAt: '2026-01-01T00:00:00.000Z',
    data: { a: 'é' },
  });
  const headers = signatureHeaders(secret, { id: 'evt_1', type: 'invoice.paid' }, body, Math.floor(Date.now() / 1000));
  const received = { path: '/', headers, body };
  t.true(xSignatureValid(secret, received));
  t.deepEqual(standardWebhookPayload(secret, received), JSON.parse(body));
  t.throws(() => standardWebhookPayload(secret, { ...received, body: body.replace('é', 'e') }));
});

test('the retry schedule: default, configured, jitter within ±10%, Retry-After when longer, then exhausted', (t) => {
  t.deepEqual(retrySchedule({ WEBHOOK_RETRY_SCHEDULE_SECONDS: undefined }), DEFAULT_RETRY_SCHEDULE_SECONDS);
  t.deepEqual(retrySchedule({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,2.5' }), [1, 2.5]);
  const schedule = DEFAULT_RETRY_SCHEDULE_SECONDS;
  t.is(
    nextAttemptDelayMs(schedule, 1, null, () => 0),
    4500,
  );
  t.is(
    nextAttemptDelayMs(schedule, 1, null, () => 1),
    5500,
  );
  t.is(
    nextAttemptDelayMs(schedule, 2, null, () => 0.5),
    300_000,
  );
  t.is(
    nextAttemptDelayMs(schedule, 7, null, () => 0.5),
    36_000_000,
  );
  t.is(nextAttemptDelayMs(schedule, 8, null), null);
  t.is(
    nextAttemptDelayMs(schedule, 1, 60_000, () => 0.5),
    60_000,
  );
  t.is(
    nextAttemptDelayMs(schedule, 2, 60_000, () => 0.5),
    300_000,
    'a shorter Retry-After does not hurry the schedule',
  );
  t.is(
    nextAttemptDelayMs(schedule, 1, 10 * 86_400_000, () => 0.5),
    86_400_000,
    'capped at a day',
  );
  t.is(parseRetryAfter('120'), 120_000);
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.is(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
  t.is(parseRetryAfter('soon'), null);
  t.is(parseRetryAfter(undefined), null);
});
