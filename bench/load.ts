/**
 * `npm run load`: a mixed workload against the real web process and every real worker process (pdf with its
 * Chromium, webhooks, provider_events, lifecycle), each started as the Procfile starts it, on a throw-away
 * database. A fixed number of connections (each a client that sends its next request when the last is
 * answered) mixes license verify/validate, invoice and payment writes (with Idempotency-Key), reads, invoice
 * PDFs, and signed provider_a webhooks that the provider_events worker turns into payments; every event is
 * delivered by the webhooks worker to a loopback receiver. Reports throughput, p50/p99 per request kind, and
 * the peak resident memory of each process (/proc/<pid>/status; the pdf worker with its Chromium processes).
 *
 *   LOAD_SECONDS      measured seconds per connection count (60)
 *   LOAD_CONNECTIONS  comma list of connection counts, each measured in turn (16)
 *
 * Exits non-zero on any error (a connection error, or an answer other than the kind's expected status), when a
 * process dies, or when a memory bound is passed: web < 200 MB, pdf worker with Chromium < 800 MB.
 * test/faults/load.test.ts runs the same for 10 s inside `npm run test:faults`.
 */
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex.ts';
import { money } from '../src/money.ts';
import type { WorkerGroup } from '../src/queue/job.ts';
import { insertSession } from '../src/auth/repo.ts';
import { createLocalUser } from '../src/auth/service.ts';
import { randomToken, sha256Hex } from '../src/crypto/tokens.ts';
import { sampleMemory, startWeb, startWorker, type MemoryPeak, type ServiceProcess } from '../test/faults/processes.ts';
import type { Json } from '../test/helpers/http.ts';
import { seedRows } from './fixtures.ts';
import { seedLicenses } from './license-fixtures.ts';

export const MEMORY_BOUNDS_MB = { web: 200, 'worker-pdf': 800 } as const;

const PROVIDER_A_SECRET = 'whsec_load_provider_a';
const WORKERS: WorkerGroup[] = ['pdf', 'webhooks', 'provider_events', 'lifecycle'];

export interface KindStats {
  count: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LoadResult {
  seconds: number;
  connections: number;
  requests: number;
  perSecond: number;
  errors: number;
  /** The first few errors, so a failing run says why. */
  errorSamples: string[];
  kinds: Record<string, KindStats>;
  memory: Record<string, MemoryPeak>;
  /** Work the workers finished during the run. */
  background: { webhookDeliveries: number; providerEventsApplied: number; pdfsRendered: number };
  /** Processes that died during the run. */
  died: string[];
}

/** One kind of request: its share of the mix (cards in a deck of 37), and how to make and judge one. */
interface Kind {
  weight: number;
  run(): Promise<void>;
}

class Recorder {
  latencies = new Map<string, number[]>();
  errors = new Map<string, number>();
  samples: string[] = [];
  async time(kind: string, work: () => Promise<void>): Promise<void> {
    const started = performance.now();
    try {
      await work();
      const list = this.latencies.get(kind) ?? [];
      list.push(performance.now() - started);
      this.latencies.set(kind, list);
    } catch (error) {
      this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
      if (this.samples.length < 10)
        this.samples.push(`${kind}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { cookie?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; expect: number[] },
): Promise<Json> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(baseUrl + path, { method, headers, body });
  const buffer = Buffer.from(await response.arrayBuffer());
  if (!options.expect.includes(response.status))
    throw new Error(`${method} ${path}: ${response.status} ${buffer.toString('utf8').slice(0, 300)}`);
  return (response.headers.get('content-type') ?? '').includes('json')
    ? JSON.parse(buffer.toString('utf8'))
    : undefined;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** A loopback webhook receiver answering 200 to everything; counts what it got. */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An admin session written straight into the database. A login through the web process would hash a password
 * with Argon2id (m = 64 MiB), which lifts the web process's VmHWM by about that much for its whole life: the
 * run is to measure the workload, and login is not part of it (its cost is stated in docs/operations.md).
 */
async function sessionWithoutLogin(knex: Knex): Promise<string> {
  const user = await createLocalUser(knex, {
    email: `load-${randomUUID()}@example.test`,
    password: 'load correct horse battery',
    role: 'admin',
  });
  const token = randomToken(32);
  await insertSession(knex, {
    token_hash: sha256Hex(token),
    user_id: user.id,
    expires_at: new Date(Date.now() + 86_400_000),
    ip: '127.0.0.1',
    user_agent: 'bench/load.ts',
  });
  return `session=${token}`;
}

/**
 * Seeds `databaseUrl` (a migrated database with the queues, nothing else), starts the web process and every
 * worker on it, runs the mix for each connection count in turn, and stops everything it started.
 */
export async function runMixedLoad(
  databaseUrl: string,
  options: { seconds: number; connections: number[]; log?: (m: string) => void },
): Promise<LoadResult[]> {
  const log = options.log ?? (() => {});
  const knex = createKnex(databaseUrl, 2);
  const receiver = await startReceiver();
  const processes: ServiceProcess[] = [];
  try {
    log('seeding');
    const rows = await seedRows(knex);
    const licenses = await seedLicenses(knex);
    await knex('webhook_endpoints').insert({
      url: receiver.url,
      events: ['*'],
      secret: 'whsec_load_outbound_0123456789abcdef',
    });
    const env = {
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      PROVIDER_A_WEBHOOK_SECRET: PROVIDER_A_SECRET,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    };
    log('starting web and workers');
    const web = await startWeb(databaseUrl, { env });
    processes.push(web);
    for (const group of WORKERS) processes.push(await startWorker(group, databaseUrl, env));
    const cookie = await sessionWithoutLogin(knex);

    const results: LoadResult[] = [];
    for (const connections of options.connections) {
      log(`${connections} connections for ${options.seconds} s`);
      results.push(
        await measure(knex, web.baseUrl, cookie, processes, { ...rows, ...licenses }, connections, options.seconds),
      );
    }
    return results;
  } finally {
    await Promise.all(processes.map((p) => p.stop(20_000)));
    await receiver.close();
    await knex.destroy();
  }
}

async function measure(
  knex: Knex,
  baseUrl: string,
  cookie: string,
  processes: ServiceProcess[],
  fixtures: Awaited<ReturnType<typeof seedRows>> & Awaited<ReturnType<typeof seedLicenses>>,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const recorder = new Recorder();
  const rotate = <T>(items: readonly T[]) => {
    let i = Math.floor(Math.random() * items.length);
    return () => items[i++ % items.length]!;
  };
  const nextDevice = rotate(fixtures.knownDevices);
  const nextCustomer = rotate(fixtures.customerIds);
  const nextProduct = rotate(fixtures.productIds);
  // Issued invoices waiting for a payment (by the admin API or a provider event), and some to read back.
  const payable: Array<{ id: string; total: string; currency: string }> = [];
  const created: string[] = [];
  let n = 0;

  const createInvoice = async () => {
    const k = n++;
    const invoice = await call(baseUrl, 'POST', '/api/billing/invoices', {
      cookie,
      headers: { 'idempotency-key': `load-inv-${randomUUID()}` },
      body: {
        customerId: nextCustomer(),
        status: 'issued',
        lineItems: [{ description: `Load seat ${k}`, quantity: 1 + (k % 4), unitPrice: `${(k % 90) + 10}.50` }],
      },
      expect: [201],
    });
    payable.push({ id: invoice.id, total: invoice.total, currency: invoice.currency });
    created.push(invoice.id);
    if (created.length > 500) created.shift();
  };
  const kinds: Record<string, Kind> = {
    'license verify': {
      weight: 8,
      run: async () => {
        const body = await call(baseUrl, 'POST', '/api/licenses/verify', {
          body: { licenseKey: nextDevice().licenseKey },
          expect: [200],
        });
        if (body.valid !== true) throw new Error(`verify answered ${JSON.stringify(body)}`);
      },
    },
    'license validate': {
      weight: 8,
      run: async () => {
        const { licenseKey, deviceId } = nextDevice();
        const body = await call(baseUrl, 'POST', '/api/licenses/validate', {
          body: { licenseKey, deviceId, deviceName: 'Load Workstation' },
          expect: [200],
        });
        if (body.valid !== true) throw new Error(`validate answered ${JSON.stringify(body)}`);
      },
    },
    'invoice create': { weight: 6, run: createInvoice },
    'payment create': {
      weight: 4,
      run: async () => {
        const invoice = payable.shift();
        if (!invoice) return createInvoice();
        await call(baseUrl, 'POST', '/api/billing/payments', {
          cookie,
          headers: { 'idempotency-key': `load-pay-${invoice.id}` },
          body: { invoiceId: invoice.id, amount: invoice.total, paymentMethod: 'bank_transfer' },
          expect: [201],
        });
      },
    },
    'provider webhook': {
      weight: 2,
      run: async () => {
        const invoice = payable.shift();
        if (!invoice) return createInvoice();
        const id = `evt_load_${randomUUID()}`;
        const body = JSON.stringify({
          id,
          type: 'checkout.session.completed',
          created: Math.floor(Date.now() / 1000),
          data: {
            object: {
              id: `cs_${id}`,
              object: 'checkout.session',
              payment_intent: `pi_${id}`,
              payment_status: 'paid',
              amount_total: money(invoice.total).times(100).toNumber(),
              currency: invoice.currency.toLowerCase(),
              metadata: { invoiceId: invoice.id },
            },
          },
        });
        const t = Math.floor(Date.now() / 1000);
        const signature = createHmac('sha256', PROVIDER_A_SECRET).update(`${t}.${body}`).digest('hex');
        await call(baseUrl, 'POST', '/api/billing/webhooks/provider_a', {
          rawBody: body,
          headers: { 'provider_a-signature': `t=${t},v1=${signature}` },
          expect: [200],
        });
      },
    },
    read: {
      weight: 8,
      run: async () => {
        const pick = n++ % 3;
        if (pick === 0 && created.length > 0)
          await call(baseUrl, 'GET', `/api/billing/invoices/${created[n % created.length]}`, { cookie, expect: [200] });
        else if (pick === 1) await call(baseUrl, 'GET', `/api/customers/${nextCustomer()}`, { cookie, expect: [200] });
        else await call(baseUrl, 'GET', `/api/products/${nextProduct()}`, { cookie, expect: [200] });
      },
    },
    // Waits up to 10 s for the render (D-53): 202 "rendering" is an answer too.
    'invoice pdf': {
      weight: 1,
      run: async () => {
        const id = created[Math.floor(Math.random() * created.length)];
        if (!id) return createInvoice();
        await call(baseUrl, 'GET', `/api/billing/invoices/${id}/pdf`, { cookie, expect: [200, 202] });
      },
    },
  };
  // A fixed deck of kinds by weight, each client walking it from its own offset.
  const deck: string[] = [];
  for (const [name, kind] of Object.entries(kinds)) for (let i = 0; i < kind.weight; i++) deck.push(name);
  deck.sort(() => Math.random() - 0.5);

  const count = async (sql: string) => Number((await knex.raw(sql)).rows[0].n);
  const before = {
    webhookDeliveries: await count(`select count(*) as n from webhook_deliveries where status = 'delivered'`),
    providerEventsApplied: await count(`select count(*) as n from provider_events where status = 'processed'`).catch(
      () => 0,
    ),
    pdfsRendered: await count(
      `select count(*) as n from pgboss.job where name = 'invoices.render-pdf' and state = 'completed'`,
    ),
  };
  const memory = sampleMemory(Object.fromEntries(processes.map((p) => [p.name, p.pid])));
  const endAt = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      for (let i = c * 7; Date.now() < endAt; i++) {
        const name = deck[i % deck.length]!;
        await recorder.time(name, kinds[name]!.run);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  // The workers finish what the load queued; memory is sampled meanwhile too.
  await new Promise((r) => setTimeout(r, 3000));
  const peaks = memory.stop();
  const after = {
    webhookDeliveries: await count(`select count(*) as n from webhook_deliveries where status = 'delivered'`),
    providerEventsApplied: await count(`select count(*) as n from provider_events where status = 'processed'`).catch(
      () => 0,
    ),
    pdfsRendered: await count(
      `select count(*) as n from pgboss.job where name = 'invoices.render-pdf' and state = 'completed'`,
    ),
  };

  const stats: Record<string, KindStats> = {};
  let requests = 0;
  let errors = 0;
  for (const name of Object.keys(kinds)) {
    const latencies = (recorder.latencies.get(name) ?? []).sort((a, b) => a - b);
    const failed = recorder.errors.get(name) ?? 0;
    requests += latencies.length + failed;
    errors += failed;
    stats[name] = {
      count: latencies.length + failed,
      errors: failed,
      perSecond: latencies.length / elapsed,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: quantile(latencies, 1),
    };
  }
  return {
    seconds: elapsed,
    connections,
    requests,
    perSecond: (requests - errors) / elapsed,
    errors,
    errorSamples: recorder.samples,
    kinds: stats,
    memory: peaks,
    background: {
      webhookDeliveries: after.webhookDeliveries - before.webhookDeliveries,
      providerEventsApplied: after.providerEventsApplied - before.providerEventsApplied,
      pdfsRendered: after.pdfsRendered - before.pdfsRendered,
    },
    died: processes.filter((p) => !p.alive()).map((p) => `${p.name}:\n${p.output().slice(-2000)}`),
  };
}

/** Why a result does not pass, or an empty list. */
export function loadProblems(result: LoadResult): string[] {
  const problems: string[] = [];
  if (result.errors > 0) problems.push(`${result.errors} errors; first: ${result.errorSamples.join(' | ')}`);
  for (const [name, bound] of Object.entries(MEMORY_BOUNDS_MB)) {
    const peak = result.memory[name];
    if (peak && peak.treeMb >= bound) problems.push(`${name} peak RSS ${peak.treeMb.toFixed(0)} MB >= ${bound} MB`);
  }
  for (const died of result.died) problems.push(`died: ${died}`);
  return problems;
}

export function formatLoad(result: LoadResult): string {
  const lines = [
    `${result.connections} connections, ${result.seconds.toFixed(1)} s: ${result.requests} requests, ` +
      `${result.perSecond.toFixed(0)} req/s, ${result.errors} errors`,
  ];
  const header = ['kind', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'];
  const rows = Object.entries(result.kinds).map(([name, k]) => [
    name,
    String(k.count),
    k.perSecond.toFixed(1),
    k.p50Ms.toFixed(1),
    k.p99Ms.toFixed(1),
    k.maxMs.toFixed(0),
    String(k.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(line(header), ...rows.map(line), '');
  lines.push(`${'process'.padEnd(24)}peak RSS (VmHWM)  peak RSS with children (sampled sum)  processes`);
  for (const [name, m] of Object.entries(result.memory)) {
    const bound = MEMORY_BOUNDS_MB[name as keyof typeof MEMORY_BOUNDS_MB];
    lines.push(
      `${name.padEnd(24)}${`${m.processMb.toFixed(0)} MB`.padStart(16)}  ` +
        `${`${m.treeMb.toFixed(0)} MB`.padStart(36)}  ` +
        `${String(m.processesSeen).padStart(9)}${bound ? `   (bound ${bound} MB)` : ''}`,
    );
  }
  const b = result.background;
  lines.push(
    '',
    `workers meanwhile: ${b.webhookDeliveries} webhook deliveries, ${b.providerEventsApplied} provider events ` +
      `applied, ${b.pdfsRendered} PDFs rendered`,
  );
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { cleanUp, startBenchDatabase } = await import('./harness.ts');
  const seconds = Number(process.env.LOAD_SECONDS ?? 60);
  const connections = (process.env.LOAD_CONNECTIONS ?? '16').split(',').map(Number);
  if (!(seconds > 0) || connections.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error('LOAD_SECONDS must be > 0 and LOAD_CONNECTIONS a comma list of integers >= 1');
  const say = (m: string) => console.error(`[load] ${m}`);
  try {
    say('starting PostgreSQL and migrating a database');
    const url = await startBenchDatabase();
    const results = await runMixedLoad(url, { seconds, connections, log: say });
    console.log(`\n${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}\n`);
    let failed = false;
    for (const result of results) {
      console.log(formatLoad(result));
      const problems = loadProblems(result);
      if (problems.length > 0) {
        failed = true;
        console.log(`\nFAILED:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
      }
      console.log('');
    }
    return failed ? 1 : 0;
  } finally {
    await cleanUp();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let code = 1;
  try {
    code = await main();
  } catch (error) {
    console.error('\nLOAD FAILED:', error instanceof Error ? error.stack : error);
  }
  process.exit(code);
}
