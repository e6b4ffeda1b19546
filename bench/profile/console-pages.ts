/**
 * Profiling aid for issue 34 (not part of `npm run bench`): where a console page's time goes on the book left
 * running by console-book.ts. Serves the app in this process on BOOK_URL, asks each page PROFILE_REQUESTS times one
 * at a time (after 5 unmeasured), and prints the mean of the whole request and of each statement it sent (wall
 * time from send to answer); what is not in the statements is the page's own work (rendering, Node).
 *
 *   BOOK_URL=postgres://... npx tsx bench/profile/console-pages.ts /admin /admin/invoices?sort=-total
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createLogger } from '../../src/logger.ts';
import { startHttpServer } from '../../src/web/server.ts';
import { loginAsAdmin } from '../../test/helpers/auth.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 30);
const url = process.env.BOOK_URL;
if (!url) throw new Error('BOOK_URL: the database console-book.ts printed');
let current: { text: string; ms: number }[] | null = null;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (!current) return query.apply(this, args);
  const first = args[0] as string | { text?: string };
  const text = (typeof first === 'string' ? first : (first.text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 110);
  const entry = { text, ms: 0 };
  current.push(entry);
  const start = performance.now();
  const done = () => (entry.ms = performance.now() - start);
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...a: unknown[]) => unknown;
    args[last] = (...a: unknown[]) => {
      done();
      return callback(...a);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) result.then(done, done);
  return result;
} as typeof pg.Client.prototype.query;

const knex = createKnex(url, 10);
const config = loadConfig({ ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'silent', DATABASE_URL: url });
const server = await startHttpServer({ db: knex, config, logger: createLogger(config, 'web') }, 0, '127.0.0.1');
const base = `http://127.0.0.1:${server.port}`;
const { cookie } = await loginAsAdmin(base, knex);
for (const path of process.argv.slice(2)) {
  const statements: { text: string; ms: number }[] = [];
  let whole = 0;
  for (let i = 0; i < REQUESTS + 5; i += 1) {
    current = [];
    const start = performance.now();
    const response = await fetch(`${base}${path}`, { headers: { cookie } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path}: status ${response.status}`);
    if (i < 5) continue;
    whole += performance.now() - start;
    current.forEach((s, n) => {
      statements[n] ??= { text: s.text, ms: 0 };
      statements[n]!.ms += s.ms;
    });
  }
  current = null;
  console.log(`\nGET ${path}: ${(whole / REQUESTS).toFixed(1)} ms a request, serial; its statements:`);
  for (const s of statements) console.log(`  ${(s.ms / REQUESTS).toFixed(2).padStart(7)} ms  ${s.text}`);
}
await server.close();
await knex.destroy();
