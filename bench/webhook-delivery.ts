/**
 * Outbound webhook delivery (issue 6): events recorded in transactions fan out to an endpoint, a real
 * `workers/webhooks.ts` process delivers them to a receiver on loopback. Prints deliveries/s and the
 * event-to-delivery latency (event committed -> request at the receiver) p50/p99, beside a raw
 * ceiling measured in the same run: this process posting the same signed JSON to the same receiver
 * with the worker's concurrency. Aim: >= 300 deliveries/s and p50 < 250 ms. Then the worker's own capacity: a
 * backlog recorded with no worker running, drained by a fresh one.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKnex } from '../src/db/knex.ts';
import { recordEvents } from '../src/events/service.ts';
import { createLogger } from '../src/logger.ts';
import { createBoss, setBoss } from '../src/queue/boss.ts';
import { DISPATCH_LIMITS } from '../src/webhooks/dispatcher.ts';
import { onCleanup, startBenchDatabase, runBenchScript } from './harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (message: string) => console.error(`[bench webhooks] ${message}`);
const COUNT = Number(process.env.WEBHOOK_BENCH_COUNT ?? 2000);
const SECRET = 'whsec_bench_secret_0123456789abcdef';

interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['x-event-id'];
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, arrivals, close: () => new Promise((r) => server.close(() => r())) };
}

async function waitFor(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** The ceiling: signed JSON POSTs straight from this process, `concurrency` at a time. */
async function rawPosts(url: string, count: number, concurrency: number): Promise<number> {
  const body = JSON.stringify({
    id: 'evt_ceiling',
    type: 'invoice.paid',
    createdAt: new Date().toISOString(),
    data: { amount: '10.00' },
  });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const signature = createHmac('sha256', SECRET).update(body).digest('hex');
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': signature, 'x-event-id': `ceiling-${i}` },
          body,
          redirect: 'manual',
        });
        await res.arrayBuffer();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 8);
  onCleanup(() => knex.destroy());
  const boss = createBoss(databaseUrl, createLogger({ LOG_LEVEL: 'silent' }), {
    migrate: false,
    supervise: false,
    max: 4,
  });
  await boss.start();
  onCleanup(() => boss.stop({ graceful: false }));
  setBoss(boss);
  const receiver = await startReceiver();
  onCleanup(() => receiver.close());
  await knex('webhook_endpoints').insert({ url: receiver.url, events: ['*'], secret: SECRET });

  const startWorker = () => {
    const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/webhooks.ts'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'silent',
        NODE_ENV: 'development',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    onCleanup(() => {
      if (worker.exitCode === null) worker.kill('SIGTERM');
    });
    return worker;
  };
  say('starting the webhooks worker (workers/webhooks.ts)');
  const child = startWorker();

  const record = (n: number) =>
    knex
      .transaction((trx) =>
        recordEvents(trx, [
          { type: 'invoice.paid', data: { invoiceId: `bench-${n}`, amount: '10.00', currency: 'USD' } },
        ]),
      )
      .then(([recorded]) => ({ id: recorded!.id, committedAt: Date.now() }));
  say('warm-up: 50 events');
  const warm = await Promise.all(Array.from({ length: 50 }, (_, i) => record(i)));
  await waitFor(() => warm.every((e) => receiver.arrivals.has(e.id)), 60_000, 'warm-up deliveries');

  say(`${COUNT} events from 16 concurrent writers`);
  const created = new Map<string, number>();
  let n = 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (n < 1000 + COUNT) {
        const event = await record(n++);
        created.set(event.id, event.committedAt);
      }
    }),
  );
  const recordedIn = (performance.now() - started) / 1000;
  await waitFor(() => [...created.keys()].every((id) => receiver.arrivals.has(id)), 300_000, 'deliveries');
  const perSecond = COUNT / ((performance.now() - started) / 1000);
  const latencies = [...created].map(([id, at]) => receiver.arrivals.get(id)! - at).sort((a, b) => a - b);

  // The worker's own capacity, apart from how fast this process records: a backlog recorded while no worker
  // runs, drained by a fresh one, timed from its first delivery to its last.
  say(`backlog: ${COUNT} events recorded with the worker stopped, then drained by a new one`);
  child.kill('SIGTERM');
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  const backlog: string[] = [];
  let m = 100_000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (m < 100_000 + COUNT) backlog.push((await record(m++)).id);
    }),
  );
  startWorker();
  await waitFor(() => backlog.every((id) => receiver.arrivals.has(id)), 300_000, 'backlog deliveries');
  const backlogArrivals = backlog.map((id) => receiver.arrivals.get(id)!);
  const drainPerSecond = COUNT / (Math.max(1, Math.max(...backlogArrivals) - Math.min(...backlogArrivals)) / 1000);

  say('raw ceiling: the same POSTs from this process');
  const ceiling = await rawPosts(receiver.url, COUNT, DISPATCH_LIMITS.concurrency);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  console.log('');
  console.log(
    `webhook delivery: ${COUNT} events, worker sends in flight <= ${DISPATCH_LIMITS.concurrency} ` +
      `(${DISPATCH_LIMITS.perEndpoint} per endpoint); ${os.cpus().length} CPUs, load ` +
      `${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(
    `deliveries/s ${perSecond.toFixed(0)} (aim >= 300)   raw POST ceiling ${ceiling.toFixed(0)}/s   ratio ` +
      `${(perSecond / ceiling).toFixed(2)}`,
  );
  console.log(`event-to-delivery latency ms: p50 ${p50} (aim < 250)   p99 ${p99}`);
  console.log(
    `(events were recorded at ${(COUNT / recordedIn).toFixed(0)}/s by this process; live delivery cannot outrun that)`,
  );
  console.log(
    `backlog drain by one worker: deliveries/s ${drainPerSecond.toFixed(0)}   ratio to the raw ceiling ` +
      `${(drainPerSecond / ceiling).toFixed(2)}`,
  );
}

await runBenchScript(import.meta.url, 'WEBHOOK', main);
