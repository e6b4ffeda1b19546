/** CPU time of processes of this machine, read from /proc (the profiling aids' PostgreSQL CPU). */
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';

/** CPU seconds (user + system) of these processes, from /proc. */
export function cpuOf(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}

/** The pids of the server's processes that `knex` can see (its backends and background processes). */
export async function serverPids(knex: Knex): Promise<number[]> {
  return (await knex.raw(`select pid from pg_stat_activity`)).rows.map((r: { pid: number }) => r.pid) as number[];
}
