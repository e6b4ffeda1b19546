/**
 * `npx tsx scripts/pgbouncer-check.ts [named|unnamed|both]`: runs a representative subset of the API tests with the
 * app's connection pool going through Debian's PgBouncer in transaction mode (pg-boss and the test's own admin
 * connections stay on the server, as DATABASE_SESSION_URL does in production; docs/operations.md). Not part of
 * `npm test`: it needs the `pgbouncer` binary (`apt-get install pgbouncer`; Debian 12 ships 1.18, which does not
 * carry protocol-level prepared statements between server connections).
 *
 *   unnamed  DB_NAMED_STATEMENTS=false, the setting docs/operations.md gives for such a pooler: expected to pass
 *   named    the default (named prepared statements): shows what goes wrong without the setting
 *   both     (default) one then the other
 *
 * Exits non-zero when the `unnamed` run fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { freePort } from '../test/helpers/net.ts';

/** The API paths that matter behind a pooler: prepared reads, the job insert, transactions, locks, LISTEN-free paths. */
const SUBSET = [
  'test/auth/access.test.ts',
  'test/customers/customers.test.ts',
  'test/products/products.test.ts',
  'test/invoices/create.test.ts',
  'test/invoices/numbering-concurrency.test.ts',
  'test/subscriptions/creation.test.ts',
  'test/payments/payments.test.ts',
  'test/licenses/public.test.ts',
  'test/licenses/activation.test.ts',
  'test/provider-events/inbound.test.ts',
  'test/v1/v1.test.ts',
  'test/idempotency/idempotency.test.ts',
];

const mode = process.argv[2] ?? 'both';
if (!['named', 'unnamed', 'both'].includes(mode)) {
  console.error('usage: scripts/pgbouncer-check.ts [named|unnamed|both]');
  process.exit(2);
}
const probe = spawnSync('pgbouncer', ['--version'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.error('pgbouncer is not installed: apt-get install pgbouncer');
  process.exit(2);
}
const version = probe.stdout.split('\n')[0];

const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-pgbouncer-'));
// The server and PgBouncer run as the unprivileged postgres user when we are root: they must reach the folder.
chmodSync(dir, 0o755);
const server = await startEmbeddedPostgres({
  dataDir: path.join(dir, 'data'),
  port: await freePort(),
  ephemeral: true,
});
const serverUrl = new URL(server.adminUrl);
const poolerPort = await freePort();
const ini = path.join(dir, 'pgbouncer.ini');
writeFileSync(
  ini,
  [
    '[databases]',
    // Every database name (each test file makes its own) to the same server, logged in as its owner.
    `* = host=127.0.0.1 port=${serverUrl.port} user=${serverUrl.username} password=${serverUrl.password}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${poolerPort}`,
    'unix_socket_dir =',
    'auth_type = any',
    'pool_mode = transaction',
    'default_pool_size = 20',
    'max_client_conn = 1000',
    'ignore_startup_parameters = extra_float_digits,options',
  ].join('\n'),
);
chmodSync(ini, 0o644);
const asRoot = process.getuid?.() === 0;
// Its log goes to stderr (kept, shown when it exits early): as root it runs as postgres, who cannot write in `dir`.
const pooler = spawn('pgbouncer', [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
let poolerLog = '';
pooler.stderr.on('data', (chunk: Buffer) => {
  poolerLog = (poolerLog + chunk.toString()).slice(-4000);
});
await new Promise((r) => setTimeout(r, 1000));
if (pooler.exitCode !== null) {
  console.error(`pgbouncer exited (${pooler.exitCode}):\n${poolerLog}`);
  await server.stop();
  process.exit(1);
}
const poolerUrl = `postgres://${serverUrl.username}:x@127.0.0.1:${poolerPort}/postgres`;

async function runSubset(named: boolean): Promise<{ code: number; summary: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/run.ts', ...SUBSET], {
    env: {
      ...process.env,
      DATABASE_URL: server.adminUrl,
      TEST_POOLER_URL: poolerUrl,
      DB_NAMED_STATEMENTS: String(named),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const failures = output.split('\n').filter((l) => /^\s*✘/.test(l));
  const summary = output.trim().split('\n').at(-1) ?? '';
  return { code, summary: [summary, ...failures.slice(0, 15)].join('\n') };
}

let exitCode = 0;
try {
  console.log(`${version}, pool_mode = transaction; ${SUBSET.length} test files:`);
  for (const named of mode === 'both' ? [false, true] : [mode === 'named']) {
    const { code, summary } = await runSubset(named);
    console.log(`\nDB_NAMED_STATEMENTS=${named}: exit ${code}\n${summary}`);
    if (!named && code !== 0) exitCode = 1;
  }
} finally {
  pooler.kill('SIGTERM');
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
