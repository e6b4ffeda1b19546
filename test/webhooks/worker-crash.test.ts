import { spawn, type ChildProcess } from 'node:child_process';
import type http from 'node:http';
import test from 'ava';
import { recordEvents } from '../../src/events/service.ts';
import { DISPATCH_LIMITS } from '../../src/webhooks/dispatcher.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { standardWebhookPayload, startReceiver, xSignatureValid } from './receiver.ts';

let app: TestApp;
let cookie: string;
const held: http.ServerResponse[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const children: ChildProcess[] = [];

test.before(async () => {
  app = await startTestApp();
  ({ cookie } = await loginAsAdmin(app.baseUrl, app.db));
  // The first request is held open (the worker dies while waiting); later ones succeed.
  receiver = await startReceiver({
    '/hold': (_r, res) => {
      if (receiver.at('/hold').length === 1) held.push(res);
      else res.writeHead(200).end('ok');
    },
  });
});
test.after.always(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const res of held) res.destroy();
  await receiver?.close();
  await app?.close();
});

function startWorker(): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/webhooks.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: app.database.url,
      LOG_LEVEL: 'info',
      NODE_ENV: 'test',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

test(
  'a webhooks worker killed mid-delivery: its claim runs out, then another worker sends the event again, signed, ' +
    'with the same id',
  async (t) => {
    const created = await request(app.baseUrl, '/api/billing/webhooks/endpoints', {
      cookie,
      body: { url: receiver.url('/hold'), events: ['license.created'] },
    });
    t.is(created.status, 201, created.text);
    const [event] = await app.db.transaction((trx) =>
      recordEvents(trx, [{ type: 'license.created', data: { licenseId: 'lic_1' } }]),
    );

    const first = startWorker();
    const seen = await waitFor(
      () => receiver.at('/hold'),
      (r) => r.length >= 1,
      30_000,
    );
    t.is(seen.length, 1, first.output());
    first.child.kill('SIGKILL');
    await first.exited;

    // The killed worker's claim is the delivery's next_attempt_at: pending, nothing recorded, due again when the lease
    // ends.
    const claimed = await app.db('webhook_deliveries').first();
    t.is(claimed.status, 'pending');
    t.is(claimed.attempt_count, 0);
    t.deepEqual(await app.db('webhook_delivery_attempts').select('id'), []);
    const leaseEnds = (claimed.next_attempt_at as Date).getTime();
    t.true(leaseEnds - Date.now() > DISPATCH_LIMITS.leaseMs - 5000, 'claimed for the lease');

    // A worker started at once leaves the claimed delivery alone until the lease ends, then sends it.
    const second = startWorker();
    const started = await waitFor(second.output, (output) => output.includes('worker started'), 30_000);
    t.true(started.includes('worker started'), started);
    // Up and claiming (its dispatcher starts before it says so) for what remains of the lease.
    await new Promise((r) => setTimeout(r, Math.max(0, leaseEnds - Date.now() - 1500)));
    t.is(receiver.at('/hold').length, 1, 'not sent again while claimed');
    const got = await waitFor(
      () => receiver.at('/hold'),
      (r) => r.length >= 2,
      15_000,
    );
    t.is(got.length, 2, second.output());
    t.true(Date.now() >= leaseEnds - 100);
    const redelivered = got[1]!;
    const secret = (await app.db('webhook_endpoints').first()).secret as string;
    t.true(xSignatureValid(secret, redelivered));
    t.is((standardWebhookPayload(secret, redelivered) as { id: string }).id, event!.id);
    t.is(redelivered.headers['x-event-id'], got[0]!.headers['x-event-id']);
    const delivery = await waitFor(
      () => app.db('webhook_deliveries').first(),
      (d) => d.status === 'delivered',
      10_000,
    );
    t.is(delivery.status, 'delivered');
    t.is(delivery.attempt_count, 1, 'the interrupted send was never recorded as an attempt');
    second.child.kill('SIGTERM');
    t.is(await second.exited, 0, second.output());
    t.is(receiver.at('/hold').length, 2);
  },
);
