/** CPU time of processes of this machine, read from /proc: the benchmarks' and profiling aids' one reading of it. */
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';
import { processTree } from '../test/faults/processes.ts';

/** The fields of /proc/<pid>/stat after the parenthesised command (which may itself hold spaces and parentheses). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process, in ticks (USER_HZ, 10 ms); 0 for a process gone meanwhile. */
export function cpuTicks(pid: number): number {
  try {
    const fields = statFields(pid);
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The parent of a process (a backend's is the postmaster). */
export function parentPid(pid: number): number {
  return Number(statFields(pid)[1]);
}

/** cpuTicks of a process and all its descendants (the postmaster's backends and auxiliary processes). */
export function treeTicks(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuTicks(p), 0);
}

/** CPU seconds (user + system) of these processes. */
export function cpuOf(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + cpuTicks(pid), 0) / 100;
}

/** The pids of the server's processes that `knex` can see (its backends and background processes). */
export async function serverPids(knex: Knex): Promise<number[]> {
  return (await knex.raw(`select pid from pg_stat_activity`)).rows.map((r: { pid: number }) => r.pid) as number[];
}
