/**
 * Real processes for the fault tests and the load run: the web process (src/server.ts) and worker processes
 * (workers/<group>.ts) started as production starts them, killed with real signals, and their memory read from
 * /proc. Every process started here is remembered; killAll() ends them (test.after.always).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { TestFn } from 'ava';
import type { WorkerGroup } from '../../src/queue/job.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/net.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** The last 20,000 characters it wrote (stdout and stderr). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after `graceMs`), then the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const started = new Set<ServiceProcess>();

/**
 * `node <args>` (on this script's Node; or `command`) with `env` on top of ours. Its stdin stays an open pipe: a child
 * that watches it (the bench's ceiling server) can exit when this process dies without cleaning up.
 */
export function spawnService(
  name: string,
  args: string[],
  env: Record<string, string>,
  command = process.execPath,
): ServiceProcess {
  const child = spawn(command, args, {
    env: { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'test', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const service: ServiceProcess = {
    name,
    child,
    pid: child.pid!,
    output: () => output,
    exited,
    alive,
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 20_000) {
      if (!alive()) return child.exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const { code } = await exited;
      clearTimeout(killer);
      return code;
    },
  };
  started.add(service);
  void exited.then(() => started.delete(service));
  return service;
}

export async function killAll(): Promise<void> {
  await Promise.all([...started].map((s) => s.kill()));
}

/**
 * A database of its own for the calling test file (cloned from the template before its tests) and, after
 * them, every process started here killed before that database is dropped. Read it inside tests.
 */
export function databaseOfThisFile(test: TestFn): () => TestDatabase {
  let database: TestDatabase | undefined;
  test.before(async () => {
    database = await createTestDatabase();
  });
  test.after.always(async () => {
    await killAll();
    await database?.drop();
  });
  return () => {
    if (!database) throw new Error('the test database is not created yet');
    return database;
  };
}

/**
 * The Node arguments of a package.json script that the Procfile runs (`web`, `worker:pdf`, ...): the tests and
 * benches start a role exactly as production does, flags included, as one process (no npm parent).
 */
export function roleArgs(script: string): string[] {
  const scripts = (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  // `exec` makes the shell npm runs the script with become node, so npm's signals reach it (D-93).
  const [command, ...args] = (scripts[script] ?? '').replace(/^exec /, '').split(/\s+/);
  if (command !== 'node') throw new Error(`package.json script ${script} does not start with node: ${scripts[script]}`);
  return args;
}

export interface WebProcess extends ServiceProcess {
  port: number;
  baseUrl: string;
}

/** Status of GET `url`, or 0 when nothing answers. */
export async function statusOf(url: string, timeoutMs = 5000): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/**
 * The web process (Procfile `web`) on `port`, once its /readyz answers 200 (within `readyTimeoutMs`, 60 s by default).
 */
export async function startWeb(
  databaseUrl: string,
  options: { port?: number; env?: Record<string, string>; readyTimeoutMs?: number } = {},
): Promise<WebProcess> {
  const port = options.port ?? (await freePort());
  const service = spawnService('web', roleArgs('web'), {
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...options.env,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        if (!service.alive()) throw new Error(`web exited while starting:\n${service.output()}`);
        return (await statusOf(`${baseUrl}/readyz`)) === 200;
      },
      options.readyTimeoutMs ?? 60_000,
      'the web process to be ready',
    );
  } catch (error) {
    await service.kill();
    throw error;
  }
  return { ...service, port, baseUrl };
}

/**
 * A worker process (Procfile `pdf`, `webhooks`, ...), once it logged that it started (so at LOG_LEVEL info; within
 * `readyTimeoutMs`, 60 s by default).
 */
export async function startWorker(
  group: WorkerGroup,
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { readyTimeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const file = group === 'provider_events' ? 'provider-events' : group;
  const service = spawnService(`worker-${group}`, roleArgs(`worker:${file}`), {
    DATABASE_URL: databaseUrl,
    ...env,
    LOG_LEVEL: 'info',
  });
  try {
    await waitUntil(
      () => {
        if (!service.alive()) throw new Error(`worker ${group} exited while starting:\n${service.output()}`);
        return service.output().includes('worker started');
      },
      options.readyTimeoutMs ?? 60_000,
      `the ${group} worker to start`,
    );
  } catch (error) {
    await service.kill();
    throw error;
  }
  return service;
}

// ---------------------------------------------------------------------------------------------------
// Memory, from /proc (Linux)

function statusField(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // gone meanwhile
  }
}

/** Whether `pid` still runs (a zombie waiting to be reaped does not). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** `pid` and every process below it (Chromium's browser, zygotes, renderers, GPU process of the pdf worker). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the 2nd field after the parenthesised command (which may itself hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited while listing
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

export interface MemoryPeak {
  /** Peak resident set of the process itself (VmHWM), MB. */
  processMb: number;
  /** Largest sum of the resident sets of the process and all its descendants seen by the sampler, MB. */
  treeMb: number;
  /** Sum of VmHWM over the process and every descendant seen (an upper bound: shared pages count in each), MB. */
  treeHwmSumMb: number;
  processesSeen: number;
}

/**
 * Samples the process trees of `pids` every `everyMs` until stop(): the peak sum of VmRSS over each tree, and
 * each process's VmHWM (kept for descendants that exit before the end, e.g. a Chromium relaunched).
 */
export function sampleMemory(pids: Record<string, number>, everyMs = 250) {
  const peaks: Record<string, { tree: number; hwm: Map<number, number> }> = {};
  for (const name of Object.keys(pids)) peaks[name] = { tree: 0, hwm: new Map() };
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) {
      const peak = peaks[name]!;
      let sum = 0;
      for (const p of processTree(pid)) {
        sum += statusField(p, 'VmRSS');
        const hwm = statusField(p, 'VmHWM');
        if (hwm > (peak.hwm.get(p) ?? 0)) peak.hwm.set(p, hwm);
      }
      peak.tree = Math.max(peak.tree, sum);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop(): Record<string, MemoryPeak> {
      clearInterval(timer);
      sample();
      const out: Record<string, MemoryPeak> = {};
      for (const [name, pid] of Object.entries(pids)) {
        const peak = peaks[name]!;
        const own = Math.max(statusField(pid, 'VmHWM'), peak.hwm.get(pid) ?? 0);
        out[name] = {
          processMb: own / 1024,
          treeMb: peak.tree / 1024,
          treeHwmSumMb: [...peak.hwm.values()].reduce((a, b) => a + b, 0) / 1024,
          processesSeen: peak.hwm.size,
        };
      }
      return out;
    },
  };
}
