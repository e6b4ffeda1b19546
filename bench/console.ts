/**
 * The console benchmark (C-9): the invoice list and the overview with 100,000 invoices and 10,000 customers
 * in the database, signed in as an admin, at 8 connections (a handful of staff and their tabs, not a public
 * API), beside the raw select ceiling measured in the same run at the same concurrency.
 * Aim: >= 0.3 of the ceiling and p99 under 150 ms. Answers other than 2xx (a 404 for a page not built, a 302
 * to the login page) fail the run.
 *
 *   BENCH_SECONDS, BENCH_WARMUP_SECONDS   as npm run bench (10, 2)
 *   CONSOLE_BENCH_PATHS                   other pages to measure, comma-separated (default /admin/invoices,/admin)
 *
 * Issue 34 adds pages measured against a p99 alone (no ratio): the aging and revenue reports under 300 ms,
 * finding a customer (the search page and the customers list's `q`) under 100 ms, and the lists sorted by a
 * column under 300 ms, on the same book.
 */
import os from 'node:os';
import { createKnex } from '../src/db/knex.ts';
import { roleArgs } from '../test/faults/processes.ts';
import { loginAsAdmin } from '../test/helpers/auth.ts';
import { ceilings, measureSelectCeiling } from './ceilings.ts';
import { CONSOLE_CUSTOMERS, CONSOLE_INVOICES, seedConsoleBook } from './console-fixtures.ts';
import { seedRows } from './fixtures.ts';
import {
  formatTable,
  measure,
  onCleanup,
  problemOf,
  startBenchDatabase,
  startChildServer,
  type LoadOptions,
  type LoadSpec,
  type Row,
  runBenchScript,
} from './harness.ts';

const say = (message: string) => console.error(`[bench console] ${message}`);
const POOL_MAX = '10';
const options: LoadOptions = {
  seconds: Number(process.env.BENCH_SECONDS || 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS || 2),
  connections: 8,
};
const PATHS = (process.env.CONSOLE_BENCH_PATHS || '/admin/invoices,/admin')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
const AIM = 0.3;
const AIM_P99_MS = 150;
/** Issue 34's pages and their p99 aims (ms). */
const FINANCE_PATHS: [string, number][] = [
  ['/admin/reports/aging', 300],
  ['/admin/reports/revenue', 300],
  ['/admin/search?q=console%20customer%204217', 100],
  ['/admin/customers?q=company%20123', 100],
  // The lists sorted by a column (C-15), each sort its own index (migration 20261129180000), like the reports' aim.
  ['/admin/invoices?sort=-total', 300],
  ['/admin/invoices?sort=-amountDue', 300],
  ['/admin/invoices?sort=dueDate', 300],
  ['/admin/payments?sort=method', 300],
  ['/admin/payments?sort=-amount', 300],
  ['/admin/customers?sort=name', 300],
];

/** A signed-in GET of `pagePath`; only an HTML page with its heading counts as answered. */
function pageLoad(pagePath: string, cookie: string): LoadSpec {
  return {
    method: 'GET',
    headers: { cookie },
    next: () => ({ path: pagePath }),
    accept: (body) => body.includes('<h1'),
  };
}

async function main(): Promise<number> {
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 2);
  onCleanup(() => knex.destroy());
  const rows = await seedRows(knex, { history: false });
  say(`generating ${CONSOLE_CUSTOMERS} customers and ${CONSOLE_INVOICES} invoices`);
  const started = performance.now();
  await seedConsoleBook(knex, rows.customerIds.length, rows.planIds);
  say(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  say(`ceiling ${ceilings.select.title}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
  const { row: ceilingRow, ceiling } = await measureSelectCeiling(databaseUrl, rows, options, POOL_MAX);
  const results: Row[] = [ceilingRow];

  say('starting the service (package.json script web)');
  // development, not production: production cookies are Secure and would not come back over http.
  const service = await startChildServer(
    'service',
    roleArgs('web'),
    { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', NODE_ENV: 'development', DB_POOL_MAX: POOL_MAX },
    '/readyz',
  );
  const { cookie } = await loginAsAdmin(service.baseUrl, knex);
  for (const pagePath of PATHS) {
    say(`GET ${pagePath}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
    const measurement = await measure(service.baseUrl, pageLoad(pagePath, cookie), options);
    results.push({
      name: `GET ${pagePath} (console)`,
      measurement,
      ceilingName: ceilings.select.title,
      ceilingRequestsPerSecond: ceiling.requestsPerSecond,
      aim: AIM,
      aimP99Ms: AIM_P99_MS,
    });
  }

  for (const [pagePath, aimP99Ms] of FINANCE_PATHS) {
    say(`GET ${pagePath}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
    const measurement = await measure(service.baseUrl, pageLoad(pagePath, cookie), options);
    results.push({ name: `GET ${pagePath} (console)`, measurement, aimP99Ms });
  }

  console.log('');
  console.log(
    `console pages, ${CONSOLE_INVOICES} invoices and ${CONSOLE_CUSTOMERS} customers; ${options.connections} ` +
      `connections, ${options.seconds} s each after ${options.warmupSeconds} s warm-up; ${os.cpus().length} CPUs, ` +
      `load ${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(formatTable(results));
  const failures = results.flatMap((row) => {
    const problem = problemOf(row.measurement);
    return problem ? [`${row.name}: ${problem}`] : [];
  });
  const died = service.exitedEarly();
  if (died) failures.push(died);
  if (failures.length > 0) {
    console.error(
      `\nCONSOLE BENCH FAILED: results with errors do not count\n${failures.map((f) => `  - ${f}`).join('\n')}`,
    );
    return 1;
  }
  return 0;
}

await runBenchScript(import.meta.url, 'CONSOLE', main);
