/**
 * Profiling aid for issue 39 (not part of `npm run bench`): runs bench/test-clocks.ts with every statement timed from
 * the advance's request on, and prints the statements that took the most time in all (count, total and mean ms), so
 * the advance's per-moment overhead can be read statement by statement.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const totals = new Map<string, { n: number; ms: number }>();
let on = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  const full = typeof first === 'string' ? first : (first?.text ?? '');
  if (!on && /update "test_clocks"/.test(full)) on = true;
  if (!on) return query.apply(this, args);
  const text = full.replace(/\s+/g, ' ').trim().slice(0, 160);
  explainOnce(this, text, args[0]);
  const start = performance.now();
  const record = () => {
    const entry = totals.get(text) ?? { n: 0, ms: 0 };
    entry.n += 1;
    entry.ms += performance.now() - start;
    totals.set(text, entry);
  };
  // knex passes a callback; pg's own callers take the promise.
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...a: unknown[]) => unknown;
    args[last] = (...a: unknown[]) => {
      record();
      return callback(...a);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  return result instanceof Promise ? result.finally(record) : result;
} as typeof pg.Client.prototype.query;
/**
 * PROFILE_EXPLAIN=<text prefix>: the 12th statement starting so runs under EXPLAIN ANALYZE first (its own transaction's
 * client, inside a savepoint rolled back), its plan printed.
 */
const explainPrefix = process.env.PROFILE_EXPLAIN;
let seen = 0;
function explainOnce(client: pg.Client, text: string, first: unknown): void {
  if (!explainPrefix || !text.startsWith(explainPrefix) || ++seen !== 12) return;
  const q = first as { text: string; values?: unknown[] };
  const run = (t: string, v?: unknown[]) => query.apply(client, [{ text: t, values: v }]) as Promise<pg.QueryResult>;
  const explain = () =>
    run(`explain (analyze, buffers) ${q.text}`, q.values).then((r) =>
      console.log(r.rows.map((row) => String(row['QUERY PLAN']).slice(0, 200)).join('\n')),
    );
  // A read (outside any transaction) is explained as it is; a write inside a savepoint that is rolled back.
  if (/^select\b/i.test(q.text.trim())) void explain();
  else
    void run('savepoint explained')
      .then(explain)
      .finally(() => run('rollback to savepoint explained'));
}

process.on('exit', () => {
  const top = [...totals.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
  for (const [text, { n, ms }] of top)
    console.log(
      `${ms.toFixed(0).padStart(7)} ms ${String(n).padStart(6)}x ${(ms / n).toFixed(1).padStart(7)} ms  ${text}`,
    );
});
// bench/test-clocks.ts runs its main only as the entry script.
process.argv[1] = fileURLToPath(new URL('../test-clocks.ts', import.meta.url));
await import('../test-clocks.ts');
