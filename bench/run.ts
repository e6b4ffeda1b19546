/**
 * `npm run bench`: a throw-away PostgreSQL (embedded, or a new database on DATABASE_URL's server), the raw
 * ceilings measured in this same run, then the real service started as production starts it, each
 * benchmark divided by its ceiling. Machines and neighbours vary; the ratios are what to compare.
 *
 *   BENCH_SECONDS         measured seconds per benchmark (10)
 *   BENCH_WARMUP_SECONDS  unmeasured warm-up before each (2)
 *   BENCH_CONNECTIONS     concurrent connections (32)
 *   BENCH_FILTER          only benchmarks whose name contains this text
 *   BENCH_CPU_PROF_DIR    when set, the service and the ceiling servers run under `node --cpu-prof` and write their
 *                         profiles there on exit (the ceiling's name starts `CEILING-`), to compare where each spends
 *
 * Exits non-zero when any run saw a non-2xx answer, a connection error or a 2xx answer its load did not
 * accept, or a server died. A benchmark's aim (a ratio, e.g. >=0.75) is printed, never failed on.
 *
 * The public license endpoints are rate-limited per client IP; bench/license-fixtures.ts raises that
 * setting in the bench database before the service starts, so the load is not answered 429.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKnex } from '../src/db/knex.ts';
import type { Knex } from 'knex';
import { loginAsAdmin } from '../test/helpers/auth.ts';
import { roleArgs } from '../test/faults/processes.ts';
import { benchmarks } from './benchmarks.ts';
import { ceilings } from './ceilings.ts';
import { seedRows } from './fixtures.ts';
import { seedLicenses } from './license-fixtures.ts';
import {
  aimMet,
  cleanUp,
  formatTable,
  measure,
  onCleanup,
  problemOf,
  ratioOf,
  startBenchDatabase,
  startChildServer,
  type CeilingKind,
  type LoadOptions,
  type Row,
} from './harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return value;
}

const options: LoadOptions = {
  seconds: envNumber('BENCH_SECONDS', 10),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2),
  connections: envNumber('BENCH_CONNECTIONS', 32),
};
// Both the service and the ceiling servers get this pool, so pool size is not what the ratio measures.
const POOL_MAX = '10';

const say = (message: string) => console.error(`[bench] ${message}`);

/** The commit measured, so saved results can be compared; `-dirty` when the tree had changes. */
function gitRevision(): string | null {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain') ? '-dirty' : '');
  } catch {
    return null;
  }
}

/** `--cpu-prof` for the service when BENCH_CPU_PROF_DIR names a folder (the profile is written when it stops). */
function cpuProfileArgs(namePrefix = ''): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${path.resolve(dir)}`,
        ...(namePrefix ? [`--cpu-prof-name=${namePrefix}\${pid}.cpuprofile`] : []),
      ]
    : [];
}

/**
 * Each measurement starts from a settled database, as the ceilings (measured first, on a fresh one) do: the dead
 * rows and WAL that the benchmark before it left (validations rewrite the license rows that checkout then reads)
 * are vacuumed and checkpointed now, as autovacuum and the checkpointer would within a minute in service, not
 * inside the next 12-second measurement.
 */
async function settle(knex: Knex): Promise<void> {
  await knex.raw('vacuum (analyze)');
  await knex.raw('checkpoint');
}

async function main(): Promise<number> {
  const filter = process.env.BENCH_FILTER ?? '';
  const selected = benchmarks.filter((b) => b.name.includes(filter));
  if (selected.length === 0) throw new Error(`no benchmark matches BENCH_FILTER=${filter}`);

  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 2);
  onCleanup(() => knex.destroy());
  const rows = await seedRows(knex);
  // Also raises the public license endpoints' per-IP rate limit for this service (see license-fixtures.ts).
  const licenses = await seedLicenses(knex);

  say('starting the service (package.json script web)');
  const service = await startChildServer(
    'service',
    cpuProfileArgs().concat(roleArgs('web')),
    // development, not production: production cookies are Secure and would not come back over http.
    {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
      DB_POOL_MAX: POOL_MAX,
      ...Object.assign({}, ...selected.map((b) => b.serviceEnv ?? {})),
    },
    '/readyz',
  );
  const { cookie } = await loginAsAdmin(service.baseUrl, knex);
  const fixtures = { ...rows, ...licenses, cookie };

  const results: Row[] = [];
  const ceilingRate: Partial<Record<CeilingKind, number>> = {};
  for (const kind of new Set(selected.map((b) => b.ceiling))) {
    const ceiling = ceilings[kind];
    say(`ceiling ${ceiling.title}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
    const server = await startChildServer(
      `ceiling ${kind}`,
      [...cpuProfileArgs(`CEILING-${kind}-`), '--import', 'tsx', 'bench/ceiling-server.ts', kind],
      { DATABASE_URL: databaseUrl, DB_POOL_MAX: POOL_MAX },
      '/healthz',
    );
    await settle(knex);
    const measurement = await measure(server.baseUrl, ceiling.load(fixtures), options);
    const died = server.exitedEarly();
    // Stopped before the service runs: one server under load at a time on a small machine.
    await server.stop();
    if (died) throw new Error(died);
    results.push({ name: ceiling.title, measurement });
    ceilingRate[kind] = measurement.requestsPerSecond;
  }

  for (const benchmark of selected) {
    say(`${benchmark.name}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
    await settle(knex);
    const measurement = await measure(service.baseUrl, benchmark.load(fixtures), options);
    const ceiling = ceilings[benchmark.ceiling];
    results.push({
      name: benchmark.name,
      measurement,
      ceilingName: ceiling.title,
      ceilingRequestsPerSecond: ceilingRate[benchmark.ceiling],
      aim: benchmark.aim,
      aimP99Ms: benchmark.aimP99Ms,
    });
  }
  const serviceDied = service.exitedEarly();

  console.log('');
  console.log(
    `${options.connections} connections, ${options.seconds} s each after ${options.warmupSeconds} s warm-up; ` +
      `${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(formatTable(results));

  const comparisons = selected.flatMap((benchmark) => {
    const other = benchmark.compareTo && results.find((r) => r.name === benchmark.compareTo!.name);
    const own = results.find((r) => r.name === benchmark.name);
    if (!benchmark.compareTo || !other || !own) return [];
    const ratio = own.measurement.requestsPerSecond / other.measurement.requestsPerSecond;
    const aim = benchmark.compareTo.aim;
    return [{ name: benchmark.name, of: other.name, ratio, aim, aimMet: ratio >= aim }];
  });
  for (const c of comparisons) console.log(`${c.name}: ${c.ratio.toFixed(2)} of ${c.of} in this run (aim >= ${c.aim})`);

  const failures = results.flatMap((row) => {
    const problem = problemOf(row.measurement);
    return problem ? [`${row.name}: ${problem}`] : [];
  });
  if (serviceDied) failures.push(serviceDied);

  const outDir = path.join(root, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const report = {
    finishedAt: new Date().toISOString(),
    revision: gitRevision(),
    node: process.version,
    cpus: os.cpus().length,
    loadAverage1m: os.loadavg()[0],
    options,
    poolMax: Number(POOL_MAX),
    results: results.map((row) => ({ ...row, ratio: ratioOf(row) ?? null, aimMet: aimMet(row) ?? null })),
    comparisons,
    failures,
  };
  writeFileSync(path.join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten to bench/results/latest.json`);

  if (failures.length > 0) {
    console.error(`\nBENCH FAILED: results with errors do not count\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    return 1;
  }
  return 0;
}

let exitCode = 1;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    say(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  exitCode = await main();
} catch (error) {
  console.error('\nBENCH FAILED:', error instanceof Error ? error.message : error);
  exitCode = 1;
} finally {
  if (!interrupted) await cleanUp();
}
process.exit(exitCode);
