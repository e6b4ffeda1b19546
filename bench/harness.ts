/**
 * The pieces `npm run bench` is built from: a throw-away database, child servers, an autocannon wrapper
 * and the results table. Nothing here knows which routes are measured; bench/benchmarks.ts lists them.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Knex } from 'knex';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createKnex } from '../src/db/knex.ts';
import { createLogger } from '../src/logger.ts';
import { createBoss, setBoss } from '../src/queue/boss.ts';
import { spawnService, statusOf, waitUntil } from '../test/faults/processes.ts';
import { freePort } from '../test/helpers/net.ts';
import { databaseUrl, prepareTemplate } from '../test/helpers/template.ts';

// ---------------------------------------------------------------------------------------------------
// Clean-up: everything started registers its undo here; run.ts calls cleanUp() on every way out.

const cleanups: Array<() => Promise<void> | void> = [];

export function onCleanup(undo: () => Promise<void> | void): void {
  cleanups.push(undo);
}

/** Undoes in reverse order (servers before the database, the database before its folder). */
export async function cleanUp(): Promise<void> {
  for (let undo = cleanups.pop(); undo; undo = cleanups.pop()) {
    try {
      await undo();
    } catch (error) {
      // Keep going: one failed undo must not leave the rest running.
      console.error('[bench] clean-up:', error instanceof Error ? error.message : error);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Database

/**
 * A fresh database with the service's schema, pg-boss's schema and the queues, on DATABASE_URL's server
 * when set, else on an embedded PostgreSQL in a temporary folder. Returns its URL.
 */
export async function startBenchDatabase(): Promise<string> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const tempDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-pg-'));
    onCleanup(() => rmSync(tempDir, { recursive: true, force: true }));
    // As root the server runs as the unprivileged postgres user: it must reach the folder.
    chmodSync(tempDir, 0o755);
    // Durable settings (not `ephemeral`): the write ceiling should pay for commits as production does.
    const server = await startEmbeddedPostgres({ dataDir: path.join(tempDir, 'data'), port: await freePort() });
    onCleanup(server.stop);
    adminUrl = server.adminUrl;
  }
  const name = `billing_bench_${process.pid}`;
  const admin = adminUrl;
  onCleanup(async () => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await client.end();
  });
  // The test template is exactly a migrated database with the queues installed.
  await prepareTemplate(adminUrl, name);
  return databaseUrl(adminUrl, name);
}

// ---------------------------------------------------------------------------------------------------
// Child servers

export interface ChildServer {
  baseUrl: string;
  /** Set when the process ended before stop() was called. */
  exitedEarly(): string | undefined;
  stop(): Promise<void>;
}

/**
 * Starts `node <args>` as its own process (the load generator must not share its event loop), waits
 * until GET `readyPath` answers 200, and registers its termination. Each child runs on the same Node as
 * this script (npm puts the node@22 binary first on PATH).
 */
export async function startChildServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  readyPath: string,
): Promise<ChildServer> {
  const port = await freePort();
  const child = spawnService(name, args, { ...env, PORT: String(port), HOST: '127.0.0.1' });
  let stopping = false;
  let early: string | undefined;
  void child.exited.then(({ code, signal }) => {
    if (!stopping)
      early = `${name} exited (code ${code}, signal ${signal}); its last output:\n${child.output().slice(-4000)}`;
  });
  const stop = async () => {
    stopping = true;
    await child.stop(15_000);
  };
  onCleanup(stop);

  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        if (early) throw new Error(early);
        return (await statusOf(baseUrl + readyPath)) === 200;
      },
      60_000,
      `${name} to answer 200 at ${readyPath}`,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; its last output:\n${child.output().slice(-4000)}`);
  }
  return { baseUrl, exitedEarly: () => early, stop };
}

// ---------------------------------------------------------------------------------------------------
// Load

export interface NextRequest {
  path: string;
  /** Sent as JSON when present. */
  body?: unknown;
  /** Sent as-is instead of `body` (a signed payload must arrive byte for byte). */
  rawBody?: string;
  /** Headers of this request only (a signature over its body). */
  headers?: Record<string, string>;
}

/** One kind of request, fired over and over; `next` varies it (another id, a unique email). */
export interface LoadSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  next(): NextRequest;
  /**
   * When given, a 2xx answer counts as right only when this returns true for its body (e.g. a license
   * check that answers 200 `valid: false` measured a refusal, not the work meant). Wrong answers fail the run.
   */
  accept?(body: string): boolean;
}

/** Cycles through `items`, so requests spread over many rows rather than one hot row. */
export function rotating<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error('rotating() needs at least one item');
  let i = 0;
  return () => items[i++ % items.length]!;
}

/** What seeding and logging in produced; every load is built from it. */
export interface Fixtures {
  /** `session=...` of an admin, for the Cookie header. */
  cookie: string;
  productIds: string[];
  customerIds: string[];
  /** Active monthly plans of the first products. */
  planIds: string[];
  /** Two active exclusive tax rates. */
  taxRateIds: string[];
  /** Active licenses, each with one device activated in setup (bench/license-fixtures.ts). */
  knownDevices: Array<{ licenseKey: string; deviceId: string }>;
  /** Active licenses with maxActivations null, for activating new devices. */
  unlimitedLicenseKeys: string[];
}

/** The raw ceilings of bench/ceiling-server.ts: (a) one select by primary key, (b) one write transaction. */
/** Requests posting `{licenseKey, deviceId, ...extra}` to `path` for the seeded license+device pairs in turn. */
export function eachKnownDevice(
  fixtures: Fixtures,
  path: string,
  extra: Record<string, unknown> = {},
): () => NextRequest {
  const nextPair = rotating(fixtures.knownDevices);
  return () => {
    const { licenseKey, deviceId } = nextPair();
    return { path, body: { licenseKey, deviceId, ...extra } };
  };
}

export type CeilingKind = 'select' | 'write';

/** One benchmark of the real service: one file under bench/, listed in bench/benchmarks.ts. */
export interface Benchmark {
  /** Shown in the table, e.g. `GET /api/products/:id`. */
  name: string;
  /** The raw ceiling it is divided by: reads by `select`, writes by `write`. */
  ceiling: CeilingKind;
  /** The ratio to the ceiling aimed for (e.g. 0.75): printed beside the ratio, never fails the run. */
  aim?: number;
  /** A latency aim instead: p99 at most this many ms. */
  aimP99Ms?: number;
  /** Also compared with another benchmark of the run (by name): its req/s over that one's, at least `aim`. */
  compareTo?: { name: string; aim: number };
  /** Environment the service needs for this load (e.g. a webhook secret); set when the service starts. */
  serviceEnv?: Record<string, string>;
  load(fixtures: Fixtures): LoadSpec;
}

export interface LoadOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface Measurement {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  responses2xx: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** 2xx answers the load's `accept` refused. */
  wrongAnswers: number;
  statusCodes: Record<string, number>;
  /** The first non-2xx answer, so a failing benchmark says why. */
  firstFailure?: { status: number; body: string };
}

async function fire(baseUrl: string, spec: LoadSpec, connections: number, seconds: number) {
  let firstFailure: Measurement['firstFailure'];
  let wrongAnswers = 0;
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    method: spec.method,
    headers: loadHeaders(spec),
    requests: [
      {
        setupRequest: setupFrom(spec),
        onResponse: (status, body) => {
          const ok = status >= 200 && status <= 299;
          if (ok && spec.accept && !spec.accept(String(body))) {
            wrongAnswers += 1;
            if (!firstFailure) firstFailure = { status, body: String(body).slice(0, 500) };
          }
          if (!ok && !firstFailure) firstFailure = { status, body: String(body).slice(0, 500) };
        },
      },
    ],
  });
  return { result, firstFailure, wrongAnswers };
}

/** A warm-up (JIT, pools, caches; its numbers are dropped), then the measured run. */
/** The headers every request of `spec` carries (autocannon's `headers`). */
export function loadHeaders(spec: LoadSpec): Record<string, string> {
  return { ...(spec.method === 'GET' ? {} : { 'content-type': 'application/json' }), ...spec.headers };
}

/** autocannon's `setupRequest` for `spec`: each request is the load's next one. */
export function setupFrom(spec: LoadSpec): (request: autocannon.Request) => autocannon.Request {
  return (request) => {
    const next = spec.next();
    const body = next.rawBody ?? (next.body === undefined ? undefined : JSON.stringify(next.body));
    return {
      ...request,
      path: next.path,
      body,
      ...(next.headers ? { headers: { ...request.headers, ...next.headers } } : {}),
    };
  };
}

export async function measure(baseUrl: string, spec: LoadSpec, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await fire(baseUrl, spec, options.connections, options.warmupSeconds);
  const { result, firstFailure, wrongAnswers } = await fire(baseUrl, spec, options.connections, options.seconds);
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responses2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    wrongAnswers,
    statusCodes,
    firstFailure,
  };
}

/** Why a measurement does not count, or undefined when it is clean. */
export function problemOf(m: Measurement): string | undefined {
  const problems: string[] = [];
  if (m.non2xx > 0) {
    const codes = Object.entries(m.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, count]) => `${code}×${count}`)
      .join(', ');
    problems.push(`${m.non2xx} non-2xx (${codes})`);
  }
  if (m.errors > 0) problems.push(`${m.errors} connection errors/timeouts`);
  if (m.wrongAnswers > 0) problems.push(`${m.wrongAnswers} 2xx answers that were not the expected result`);
  if (m.responses2xx === 0) problems.push('no 2xx response at all');
  if (problems.length === 0) return undefined;
  const first = m.firstFailure ? `; first: ${m.firstFailure.status} ${m.firstFailure.body}` : '';
  return problems.join(', ') + first;
}

// ---------------------------------------------------------------------------------------------------
// Output

export interface Row {
  name: string;
  measurement: Measurement;
  ceilingName?: string;
  ceilingRequestsPerSecond?: number;
  /** The benchmark's aimed-for ratio, when it has one. */
  aim?: number;
  aimP99Ms?: number;
}

/** Whether the row reached its aims (the ratio, the p99, or both); undefined without an aim. Informative only. */
export function aimMet(row: Row): boolean | undefined {
  const met: boolean[] = [];
  if (row.aimP99Ms !== undefined) met.push(row.measurement.p99Ms <= row.aimP99Ms);
  const ratio = ratioOf(row);
  if (row.aim !== undefined && ratio !== undefined) met.push(ratio >= row.aim);
  return met.length === 0 ? undefined : met.every(Boolean);
}

function aimText(row: Row): string {
  const aims = [
    row.aim === undefined ? '' : `>=${row.aim}`,
    row.aimP99Ms === undefined ? '' : `p99<=${row.aimP99Ms}ms`,
  ].filter(Boolean);
  return aims.length === 0 ? '-' : aims.join(' ');
}

export function ratioOf(row: Row): number | undefined {
  return row.ceilingRequestsPerSecond ? row.measurement.requestsPerSecond / row.ceilingRequestsPerSecond : undefined;
}

export function formatTable(rows: Row[]): string {
  const header = [
    'benchmark',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'ceiling',
    'ceiling req/s',
    'ratio',
    'aim',
    'status',
  ];
  const body = rows.map((row) => {
    const m = row.measurement;
    const ratio = ratioOf(row);
    const met = aimMet(row);
    // A missed aim is shown, not failed: machines and neighbours are noisy (run.ts).
    const status = problemOf(m) ? 'FAIL' : met === false ? 'ok, below aim' : 'ok';
    return [
      row.name,
      m.requestsPerSecond.toFixed(0),
      m.p50Ms.toFixed(1),
      m.p99Ms.toFixed(1),
      String(m.non2xx),
      String(m.errors),
      row.ceilingName ?? '-',
      row.ceilingRequestsPerSecond === undefined ? '-' : row.ceilingRequestsPerSecond.toFixed(0),
      ratio === undefined ? '-' : ratio.toFixed(2),
      aimText(row),
      status,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
  // Names left-aligned, numbers right-aligned.
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === 6 || i === 10 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/**
 * A bench script's entry point: runs `main` only when this file is the one Node started (the scripts also export
 * their parts), undoes what it set up, and exits with its code (`main` may answer one; a throw is 1).
 */
export async function runBenchScript(moduleUrl: string, label: string, main: () => Promise<unknown>): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(path.resolve(process.argv[1])).href) return;
  let code = 1;
  try {
    const answered = await main();
    code = typeof answered === 'number' ? answered : 0;
  } catch (error) {
    console.error(`\n${label} BENCH FAILED:`, error instanceof Error ? error.message : error);
  } finally {
    await cleanUp();
  }
  process.exit(code);
}

/**
 * A knex pool of `poolSize` on `databaseUrl` and a started queue client set for `enqueue` (no maintenance: nothing
 * supervises in a bench), both closed at clean-up.
 */
export async function openBenchDatabase(databaseUrl: string, poolSize: number): Promise<Knex> {
  const knex = createKnex(databaseUrl, poolSize);
  onCleanup(() => knex.destroy());
  const boss = createBoss(databaseUrl, createLogger({ LOG_LEVEL: 'silent' }), {
    migrate: false,
    supervise: false,
    max: 2,
  });
  await boss.start();
  onCleanup(() => boss.stop({ graceful: false }));
  setBoss(boss);
  return knex;
}

/** A fresh bench database (startBenchDatabase) opened by openBenchDatabase. */
export async function startBenchDatabaseWithQueue(poolSize: number): Promise<{ databaseUrl: string; knex: Knex }> {
  const databaseUrl = await startBenchDatabase();
  return { databaseUrl, knex: await openBenchDatabase(databaseUrl, poolSize) };
}
