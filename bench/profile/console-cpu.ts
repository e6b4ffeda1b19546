/**
 * Profiling aid for issue 34 (not part of `npm run bench`): CPU milliseconds per view of console pages, of the web
 * process and of PostgreSQL (utime + stime from /proc), on the book console-book.ts left running. Unlike req/s
 * and p99, CPU per request hardly moves when neighbours load this shared machine, so it compares two versions.
 *
 *   BOOK_URL=postgres://... npx tsx bench/profile/console-cpu.ts /admin '/admin/invoices?sort=-total'
 *   CPU_VIEWS (2000 measured, after 500 unmeasured), 8 connections as bench/console.ts
 */
import autocannon from 'autocannon';
import { createKnex } from '../../src/db/knex.ts';
import { startWeb } from '../../test/faults/processes.ts';
import { loginAsAdmin } from '../../test/helpers/auth.ts';
import { cpuTicks, parentPid, treeTicks } from '../proc-cpu.ts';

const url = process.env.BOOK_URL;
if (!url) throw new Error('BOOK_URL: the database console-book.ts printed');
const views = Number(process.env.CPU_VIEWS ?? 2000);
const knex = createKnex(url, 2);
const postmaster = parentPid((await knex.raw('select pg_backend_pid() as pid')).rows[0].pid as number);
const web = await startWeb(url, { env: { LOG_LEVEL: 'silent', NODE_ENV: 'development', DB_POOL_MAX: '10' } });
try {
  const { cookie } = await loginAsAdmin(web.baseUrl, knex);
  const load = async (path: string, amount: number) => {
    const result = await autocannon({ url: web.baseUrl + path, headers: { cookie }, connections: 8, amount });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors}`);
  };
  console.log(`${views} views each at 8 connections; CPU ms per view`);
  for (const path of process.argv.slice(2)) {
    await load(path, 500);
    const [web0, pg0] = [cpuTicks(web.pid), treeTicks(postmaster)];
    await load(path, views);
    const [web1, pg1] = [cpuTicks(web.pid), treeTicks(postmaster)];
    // Ticks are 10 ms.
    const ms = (ticks: number) => ((ticks * 10) / views).toFixed(2).padStart(6);
    console.log(`web ${ms(web1 - web0)}  pg ${ms(pg1 - pg0)}  ${path}`);
  }
} finally {
  await web.kill();
  await knex.destroy();
}
