/**
 * D-93, as a newcomer meets it: `npm start` (a real npm, the embedded PostgreSQL in a fresh folder) says where
 * the console and the docs are; SIGTERM to npm's pid or SIGINT to node's stops it with every child (node,
 * PostgreSQL) within 10 s; set-up failures (a second instance on the same data folder, a busy port, an
 * unreachable database) stop with one line naming the cause and the variable, no stack, nothing left running.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { freePort } from '../helpers/net.ts';
import {
  isRunning,
  killAll,
  processTree,
  spawnService,
  statusOf,
  waitUntil,
  type ServiceProcess,
} from './processes.ts';

const folder = mkdtempSync(path.join(os.tmpdir(), 'billing-start-'));
// PostgreSQL runs as the unprivileged postgres user when we are root: it must reach the folder.
chmodSync(folder, 0o755);
test.after.always(async () => {
  await killAll();
  rmSync(folder, { recursive: true, force: true });
});

/** `npm start` as the README says, through npm itself (its pid is the one a user would kill). */
function npmStart(name: string, env: Record<string, string>): ServiceProcess {
  const npmCli = process.env.npm_execpath;
  const [command, args] = npmCli?.endsWith('.js') ? [process.execPath, [npmCli, 'start']] : ['npm', ['start']];
  return spawnService(name, args, { DATABASE_URL: '', LOG_LEVEL: 'info', NODE_ENV: 'development', ...env }, command);
}

/** Our own lines: what npm prints about itself left out. */
const ownLines = (output: string) =>
  output.split('\n').filter((l) => l.trim() !== '' && !/^(npm (warn|notice)|> )/.test(l));

async function readyService(name: string, env: Record<string, string>, port: number): Promise<ServiceProcess> {
  const service = npmStart(name, { ...env, PORT: String(port), HOST: '127.0.0.1' });
  await waitUntil(
    async () => {
      if (!service.alive()) throw new Error(`npm start exited:\n${service.output()}`);
      return (await statusOf(`http://127.0.0.1:${port}/readyz`)) === 200;
    },
    120_000,
    'npm start to be ready',
  );
  return service;
}

/** Expects a set-up failure: exit 1, and exactly one line of ours that is not a JSON log line, matching `line`. */
async function expectOneLineFailure(
  t: import('ava').ExecutionContext,
  service: ServiceProcess,
  line: RegExp,
): Promise<void> {
  const { code } = await service.exited;
  t.is(code, 1, service.output());
  const plain = ownLines(service.output()).filter((l) => !l.startsWith('{'));
  t.is(plain.length, 1, plain.join('\n'));
  t.regex(plain[0] ?? '', line);
  t.false(/\n\s+at /.test(service.output()), 'no stack trace');
}

test.serial(
  'npm start says where the console and docs are; a second instance on its folder and a busy port are refused in ' +
    'one line; SIGTERM to npm stops everything',
  async (t) => {
    const dataDir = path.join(folder, 'data');
    const pgPort = await freePort();
    const port = await freePort();
    const first = await readyService('first', { PGDATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) }, port);
    const ready = ownLines(first.output()).find((l) => l.includes('"msg":"ready'));
    t.truthy(ready, first.output());
    t.regex(
      ready!,
      new RegExp(
        `console http://127\\.0\\.0\\.1:${port}/admin, API docs http://127\\.0\\.0\\.1:${port}/docs, database ` +
          `embedded PostgreSQL in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );

    const nodePid = processTree(first.pid).find((p) => p !== first.pid)!;
    const second = npmStart('second', {
      PGDATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      PORT: String(await freePort()),
    });
    await expectOneLineFailure(
      t,
      second,
      new RegExp(
        `^billing: The data folder ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another running ` +
          `instance \\(pid ${nodePid}\\): stop it, or set PGDATA_DIR to another folder$`,
      ),
    );

    const otherDir = path.join(folder, 'other');
    const busy = npmStart('busy-port', {
      PGDATA_DIR: otherDir,
      EMBEDDED_PG_PORT: String(await freePort()),
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    await expectOneLineFailure(
      t,
      busy,
      new RegExp(
        `^billing: Port ${port} on 127\\.0\\.0\\.1 is already in use by another program: stop it, or set PORT to a ` +
          `free port$`,
      ),
    );
    t.false(
      processTree(1).some((pid) => isRunning(pid) && cmdline(pid).includes(otherDir)),
      'the refused instance stopped the PostgreSQL it started',
    );

    t.is(await statusOf(`http://127.0.0.1:${port}/readyz`), 200, 'the first instance still serves');
    const tree = processTree(first.pid);
    t.true(tree.length >= 3, 'npm, node and PostgreSQL');
    process.kill(first.pid, 'SIGTERM');
    const ms = await waitUntil(() => tree.every((pid) => !isRunning(pid)), 10_000, 'every process of npm start to end');
    t.log(`SIGTERM to npm: ${tree.length} processes gone in ${ms} ms`);
  },
);

test.serial('SIGINT to the node process (not npm) stops it and its PostgreSQL too', async (t) => {
  const port = await freePort();
  const service = await readyService(
    'sigint',
    { PGDATA_DIR: path.join(folder, 'data'), EMBEDDED_PG_PORT: String(await freePort()) },
    port,
  );
  const tree = processTree(service.pid);
  const nodePid = tree.find((p) => p !== service.pid)!;
  process.kill(nodePid, 'SIGINT');
  const ms = await waitUntil(() => tree.every((pid) => !isRunning(pid)), 10_000, 'every process of npm start to end');
  t.log(`SIGINT to node: ${tree.length} processes gone in ${ms} ms`);
  t.pass();
});

test.serial('a database that cannot be reached is named in one line, with the variable to fix', async (t) => {
  const closed = await freePort();
  const service = npmStart('unreachable', {
    DATABASE_URL: `postgres://billing:secret-pw@127.0.0.1:${closed}/billing`,
    PORT: String(await freePort()),
  });
  await expectOneLineFailure(
    t,
    service,
    new RegExp(
      `^billing: Cannot reach the database at 127\\.0\\.0\\.1:${closed}/billing \\(ECONNREFUSED\\): start it, or ` +
        `fix DATABASE_URL$`,
    ),
  );
  t.false(service.output().includes('secret-pw'), 'the password is never printed');
});

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}
