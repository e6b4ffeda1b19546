/**
 * `npx tsx bench/cpu-per-request.ts`: the CPU time the web process and PostgreSQL spend per request of each
 * benchmark, read from /proc (utime + stime) around a fixed number of requests. Unlike req/s, CPU per request
 * hardly moves when neighbours load the machine, so it compares two versions of the code on a busy machine.
 * Beside it, the WAL bytes and WAL syncs (fsyncs) per request, of the whole cluster.
 *
 *   CPU_BENCH_REQUESTS  requests per benchmark (3000)
 *   CPU_BENCH_WARMUP    unmeasured requests before them (2000: the first benchmark also warms the JIT)
 *   BENCH_FILTER        only benchmarks whose name contains this text
 *   CPU_BENCH_CONNECTIONS  concurrent connections (32); 1 measures a request's own path without contention
 *   BENCH_CPU_PROF_DIR  when set, the web process runs under `node --cpu-prof` and writes its profile there when
 *                       it stops (warm-up included)
 */
import path from 'node:path';
import autocannon from 'autocannon';
import { createKnex } from '../src/db/knex.ts';
import { loginAsAdmin } from '../test/helpers/auth.ts';
import { spawnService, startWeb, statusOf, waitUntil } from '../test/faults/processes.ts';
import { freePort } from '../test/helpers/net.ts';
import { ceilings } from './ceilings.ts';
import { benchmarks } from './benchmarks.ts';
import { seedRows } from './fixtures.ts';
import { cleanUp, loadHeaders, onCleanup, setupFrom, startBenchDatabase, type LoadSpec } from './harness.ts';
import { cpuTicks, parentPid, treeTicks } from './proc-cpu.ts';
import { seedLicenses } from './license-fixtures.ts';

const TICKS_PER_MS = 100 / 1000; // USER_HZ
const CONNECTIONS = Number(process.env.CPU_BENCH_CONNECTIONS ?? 32);

async function fire(baseUrl: string, spec: LoadSpec, amount: number): Promise<number> {
  let bad = 0;
  await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    amount,
    method: spec.method,
    headers: loadHeaders(spec),
    requests: [
      {
        setupRequest: setupFrom(spec),
        onResponse: (status) => {
          if (status < 200 || status > 299) bad += 1;
        },
      },
    ],
  });
  return bad;
}

/**
 * The cluster's WAL bytes and WAL syncs so far (PostgreSQL 18: pg_stat_wal, pg_stat_io). Backends report their
 * statistics up to a second late, so this waits that long first (idle time, not counted in the CPU figures).
 */
async function walFigures(knex: ReturnType<typeof createKnex>): Promise<{ bytes: number; syncs: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const { rows } = await knex.raw(
    `select (select wal_bytes from pg_stat_wal)::float8 as bytes, (select coalesce(sum(fsyncs), 0) from pg_stat_io ` +
      `where object = 'wal')::float8 as syncs`,
  );
  return { bytes: Number(rows[0].bytes), syncs: Number(rows[0].syncs) };
}

try {
  const amount = Number(process.env.CPU_BENCH_REQUESTS ?? 3000);
  const warmup = Number(process.env.CPU_BENCH_WARMUP ?? 2000);
  const selected = benchmarks.filter((b) => b.name.includes(process.env.BENCH_FILTER ?? ''));
  const url = await startBenchDatabase();
  const knex = createKnex(url, 2);
  onCleanup(() => knex.destroy());
  const fixtures = { ...(await seedRows(knex)), ...(await seedLicenses(knex)) };
  // The postmaster: the parent of a backend of ours.
  const backend = (await knex.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
  const postmaster = parentPid(backend);
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const profile = profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(profileDir)}` } : {};
  const web = await startWeb(url, {
    env: {
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
      DB_POOL_MAX: '10',
      ...profile,
      ...Object.assign({}, ...selected.map((b) => b.serviceEnv ?? {})),
    },
  });
  // A profile is written only by a process that exits by itself.
  onCleanup(() => (profileDir ? web.stop().then(() => undefined) : web.kill()));
  const { cookie } = await loginAsAdmin(web.baseUrl, knex);
  console.log(`${amount} requests each at ${CONNECTIONS} connections; CPU ms per request (utime+stime from /proc)`);
  console.log('benchmark'.padEnd(40), 'web ms/req', ' pg ms/req', '  non-2xx', 'WAL B/req', 'syncs/req');
  const measure = async (name: string, pid: number, baseUrl: string, spec: LoadSpec) => {
    await fire(baseUrl, spec, warmup);
    const wal0 = await walFigures(knex);
    const [web0, pg0] = [cpuTicks(pid), treeTicks(postmaster)];
    const bad = await fire(baseUrl, spec, amount);
    const [web1, pg1] = [cpuTicks(pid), treeTicks(postmaster)];
    const wal1 = await walFigures(knex);
    const perRequest = (ticks: number) => (ticks / TICKS_PER_MS / amount).toFixed(3).padStart(10);
    const walPerRequest =
      `${String(Math.round((wal1.bytes - wal0.bytes) / amount)).padStart(9)} ` +
      `${((wal1.syncs - wal0.syncs) / amount).toFixed(3).padStart(10)}`;
    console.log(
      name.padEnd(40),
      perRequest(web1 - web0),
      perRequest(pg1 - pg0),
      String(bad).padStart(9),
      walPerRequest,
    );
  };
  // The raw ceilings (bench/ceiling-server.ts) under the same count, for what the service's figures are compared with.
  for (const kind of new Set(selected.map((b) => b.ceiling))) {
    const port = await freePort();
    const server = spawnService(`ceiling ${kind}`, ['--import', 'tsx', 'bench/ceiling-server.ts', kind], {
      DATABASE_URL: url,
      DB_POOL_MAX: '10',
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    onCleanup(() => server.kill());
    await waitUntil(
      async () => (await statusOf(`http://127.0.0.1:${port}/healthz`)) === 200,
      60_000,
      'the ceiling server',
    );
    await measure(
      ceilings[kind].title,
      server.pid,
      `http://127.0.0.1:${port}`,
      ceilings[kind].load({ ...fixtures, cookie }),
    );
    await server.kill();
  }
  for (const benchmark of selected)
    await measure(benchmark.name, web.pid, web.baseUrl, benchmark.load({ ...fixtures, cookie }));
} finally {
  await cleanUp();
}
process.exit(0);
