/**
 * Profiling aid for issue 34 (not part of `npm run bench`): where a console page's time goes on the book left
 * running by console-book.ts. Serves the app in this process on BOOK_URL, asks each page PROFILE_REQUESTS times one
 * at a time (after 5 unmeasured), and prints the mean of the whole request and of each statement knex sent (wall
 * time from send to answer); what is not in the statements is the page's own work (rendering, Node).
 *
 *   BOOK_URL=postgres://... npx tsx bench/profile/console-pages.ts /admin /admin/invoices?sort=-total
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createLogger } from '../../src/logger.ts';
import { startHttpServer } from '../../src/web/server.ts';
import { loginAsAdmin } from '../../test/helpers/auth.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 30);
const url = process.env.BOOK_URL;
if (!url) throw new Error('BOOK_URL: the database console-book.ts printed');
const knex = createKnex(url, 10);
// Every statement the app sends goes through this knex; its events time each from send to answer.
let current: { text: string; ms: number }[] | null = null;
const started = new Map<string, { text: string; ms: number; at: number }>();
knex.on('query', (q: { __knexQueryUid: string; sql: string }) => {
  if (!current) return;
  const entry = { text: q.sql.replace(/\s+/g, ' ').trim().slice(0, 110), ms: 0, at: performance.now() };
  current.push(entry);
  started.set(q.__knexQueryUid, entry);
});
const answered = (_: unknown, q: { __knexQueryUid: string }) => {
  const entry = started.get(q.__knexQueryUid);
  if (entry) entry.ms = performance.now() - entry.at;
  started.delete(q.__knexQueryUid);
};
knex.on('query-response', answered);
knex.on('query-error', answered);
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
