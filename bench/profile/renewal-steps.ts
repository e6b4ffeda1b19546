/**
 * Profiling aid for issue 20 (not part of `npm run bench`): seeds PROFILE_COUNT due subscriptions like
 * bench/lifecycle-sweep.ts and runs the renewal step in this process, timing every statement of every batch
 * (knex query events), so the time per step of a batch and the JS time between statements can be read.
 */
import { writeFileSync } from 'node:fs';
import type { Knex } from 'knex';
import knexFactory from 'knex';
import pg from 'pg';
import { createKnex } from '../../src/db/knex.ts';
import { renewDueSubscriptions } from '../../src/subscriptions/renew-due.ts';
import { cleanUp, startBenchDatabase } from '../harness.ts';
import { seedRows } from '../fixtures.ts';
import { AS_OF, seedDueSubscriptions } from '../lifecycle-sweep.ts';

const COUNT = Number(process.env.PROFILE_COUNT ?? 20_000);
const BATCH = Number(process.env.PROFILE_BATCH ?? 500);
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);

function label(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim().toLowerCase();
  const m = /^(insert into \w+|update \w+|delete from \w+|with \w+|select .{0,40}? from \w+|begin|commit|rollback|savepoint|release)/.exec(s);
  return (m ? m[1] : s.slice(0, 50))!;
}

async function main() {
  const url = await startBenchDatabase();
  const explain = process.env.PROFILE_EXPLAIN === '1';
  let batchNo = 0;
  const plans: string[] = [];
  const knex: Knex = explain
    ? knexFactory({
        client: 'pg',
        connection: { connectionString: url },
        pool: {
          min: 0, max: 4,
          afterCreate: (conn: pg.Client, cb: (err: Error | null, conn: pg.Client) => void) => {
            conn.on('notice', (n) => { if (batchNo === 10) plans.push(String(n.message)); });
            conn.query(`load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on; set auto_explain.log_buffers = on; set auto_explain.log_level = notice; set auto_explain.log_timing = on`, (err) => cb(err, conn));
          },
        },
      })
    : createKnex(url, 4);
  const { customerIds, planIds } = await seedRows(knex);
  await knex('webhook_endpoints').insert({ url: 'https://receiver.bench.invalid/hook', events: ['invoice.created'], secret: 'whsec_bench_secret_0123456789abcdef' });
  await seedDueSubscriptions(knex, customerIds, planIds, COUNT);

  const open = new Map<string, { label: string; at: number }>();
  const stats = new Map<string, { n: number; ms: number }>();
  let sqlMs = 0;
  let statements = 0;
  // PROFILE_TIMELINE=<file>: every statement's (transaction, label, start, end) written there as JSON lines, to see
  // how batches in flight overlap and how long each holds the numbering lock (its `with counter` to its commit).
  const timeline: string[] = [];
  const tx = new Map<string, string>();
  knex.on('query', (q: { __knexQueryUid: string; __knexTxId?: string; sql: string }) => {
    if (label(q.sql ?? '').startsWith('select * from "subscriptions"')) batchNo++;
    open.set(q.__knexQueryUid, { label: label(q.sql ?? ''), at: performance.now() });
    tx.set(q.__knexQueryUid, q.__knexTxId ?? '');
  });
  const done = (_r: unknown, q: { __knexQueryUid: string }) => {
    const o = open.get(q.__knexQueryUid);
    if (!o) return;
    open.delete(q.__knexQueryUid);
    const ms = performance.now() - o.at;
    if (process.env.PROFILE_TIMELINE) timeline.push(JSON.stringify({ tx: tx.get(q.__knexQueryUid), label: o.label, start: o.at, end: o.at + ms }));
    tx.delete(q.__knexQueryUid);
    const s = stats.get(o.label) ?? { n: 0, ms: 0 };
    s.n += 1;
    s.ms += ms;
    stats.set(o.label, s);
    sqlMs += ms;
    statements += 1;
  };
  knex.on('query-response', done);
  knex.on('query-error', (e: unknown, q: { __knexQueryUid: string }) => done(e, q));

  const started = performance.now();
  const result = await renewDueSubscriptions(knex, AS_OF, { batchSize: BATCH, concurrency: CONCURRENCY, clock: {} });
  const wall = performance.now() - started;
  console.log(JSON.stringify(result));
  console.log(`renewals ${COUNT} in ${wall.toFixed(0)} ms = ${(COUNT / (wall / 1000)).toFixed(0)}/s; batches ${result.batches}; statements ${statements} (${(statements / result.batches).toFixed(1)}/batch)`);
  console.log(`SQL time (sum over statements) ${sqlMs.toFixed(0)} ms; wall - SQL ${(wall - sqlMs).toFixed(0)} ms (JS, serialisation, event loop)`);
  const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
  for (const [l, s] of rows) console.log(`${(s.ms / result.batches).toFixed(1).padStart(8)} ms/batch ${String(s.n).padStart(6)}x  ${l}`);
  if (process.env.PROFILE_TIMELINE) writeFileSync(process.env.PROFILE_TIMELINE, timeline.join('\n'));
  if (explain) for (const p of plans) console.log('----\n' + p.replace(/Query Parameters: .*\n/, '').replace(/Query Text: [\s\S]*?\n(?=[A-Z][a-z]+[ (])/, ''));
  await knex.destroy();
}

try {
  await main();
} finally {
  await cleanUp();
}
