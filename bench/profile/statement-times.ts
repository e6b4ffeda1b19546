/**
 * Profiling aid for issue 20 (not part of `npm run bench`): sends PROFILE_REQUESTS subscription creations one at a
 * time to an in-process app on a bench database and prints, per statement (in order), its mean wall time from send
 * to answer. Serial on a quiet connection that is mostly PostgreSQL's time, so it ranks a request's statements.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { cleanUp, rotating } from '../harness.ts';
import { startInProcessApp } from '../in-process-app.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 300);
let explainNext = false;
let current: { text: string; ms: number; full: string }[] | null = null;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (!current) return query.apply(this, args);
  const first = args[0] as string | { text?: string; name?: string };
  const text = (typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text ?? ''}`)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 90);
  const entry = { text, ms: 0, full: typeof first === 'string' ? first : (first.text ?? '') };
  current.push(entry);
  const start = performance.now();
  const done = () => (entry.ms = performance.now() - start);
  // knex passes a callback; pg's own callers take the promise.
  const last = args.length - 1;
  if (
    explainNext &&
    typeof first === 'object' &&
    !(first as { values?: unknown[] }).values?.length &&
    first.text?.includes('with ')
  ) {
    // PROFILE_EXPLAIN: the last request's final query runs its statement under EXPLAIN ANALYZE first, rolled back.
    const own = first.text.split(';\n').find((p) => p.trimStart().startsWith('with'))!;
    args[0] = {
      ...first,
      text:
        `savepoint explained;\nexplain (analyze, buffers, summary) ${own};\nrollback to savepoint ` +
        `explained;\n${first.text}`,
    };
  }
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...a: unknown[]) => unknown;
    args[last] = (...a: unknown[]) => {
      done();
      for (const r of Array.isArray(a[1]) ? (a[1] as { rows: Record<string, unknown>[] }[]) : [])
        if (r.rows?.[0]?.['QUERY PLAN']) console.log(r.rows.map((row) => row['QUERY PLAN']).join('\n'));
      return callback(...a);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) result.then(done, done);
  return result;
} as typeof pg.Client.prototype.query;

try {
  const { url, rows, base, cookie } = await startInProcessApp({ LOG_LEVEL: 'silent' });
  const nextCustomer = rotating(rows.customerIds);
  const nextPlan = rotating(rows.planIds);
  const totals: { text: string; ms: number }[] = [];
  for (let i = 0; i < REQUESTS + 50; i += 1) {
    current = [];
    explainNext = !!process.env.PROFILE_EXPLAIN && i === REQUESTS + 49;
    const response = await fetch(`${base}/api/billing/subscriptions`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: nextCustomer(), planId: nextPlan(), billingCycle: 'monthly' }),
    });
    await response.arrayBuffer();
    if (response.status !== 201 && !explainNext) throw new Error(`status ${response.status}`);
    if (i < 50) continue; // warm-up
    current.forEach((s, n) => {
      totals[n] ??= { text: s.text, ms: 0 };
      totals[n]!.ms += s.ms;
    });
  }
  if (process.env.PROFILE_DUMP)
    writeFileSync(process.env.PROFILE_DUMP, JSON.stringify({ url, statements: (current ?? []).map((s) => s.full) }));
  current = null;
  for (const t of totals) console.log(`${(t.ms / REQUESTS).toFixed(3).padStart(8)} ms  ${t.text}`);
  console.log(`${(totals.reduce((a, t) => a + t.ms, 0) / REQUESTS).toFixed(3).padStart(8)} ms  total`);
} finally {
  if (!process.env.PROFILE_KEEP) await cleanUp();
}
process.exit(0);
