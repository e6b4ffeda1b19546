/**
 * Profiling aid for issue 20 (not part of `npm run bench`): seeds PROFILE_COUNT due subscriptions like
 * bench/lifecycle-sweep.ts and runs the renewal step in this process, timing every query of every batch on the
 * pg connections themselves (so BEGIN, COMMIT and multi-statement queries count too), and prints:
 * - wall time per query kind and batch (its own time plus any lock wait inside it);
 * - how long each batch held its customers' ledger locks and the year's counter (from the query that took the
 *   first of them to the end of the query that committed) and how much of the run some batch held them (the
 *   serial share: what two batches in flight cannot overlap);
 * - CPU of this process (Node) and of every PostgreSQL process of the bench's server (/proc), and WAL bytes.
 * PROFILE_TIMELINE=<file> writes every query as a JSON line (connection, label, start, end).
 * PROFILE_EXPLAIN=1 logs the plans (auto_explain, analyze) of the 10th batch's statements.
 * PROFILE_CPU=<file> writes a V8 CPU profile of this process during the renewals only (open it in Chrome's DevTools);
 * PROFILE_HEAP=<file> a sampling heap profile of the same span (what was allocated where, collected or not).
 * PROFILE_SQL=<statements> runs them after the migrations and before seeding: a what-if on the schema (a fillfactor,
 * an index dropped) measured without a migration. A batch's numbering statement waits for the batch before it to
 * commit (the year's counter), so the locks' hold counted from that statement includes that wait.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { Knex } from 'knex';
import knexFactory from 'knex';
import type pg from 'pg';
import { RENEWAL_BATCH_SIZE, RENEWAL_CONCURRENCY, renewDueSubscriptions } from '../../src/subscriptions/renew-due.ts';
import { cleanUp, startBenchDatabase } from '../harness.ts';
import { cpuOf, serverPids } from '../proc-cpu.ts';
import { seedRows } from '../fixtures.ts';
import { AS_OF, seedDueSubscriptions } from '../lifecycle-fixtures.ts';

const COUNT = Number(process.env.PROFILE_COUNT ?? 20_000);
const BATCH = Number(process.env.PROFILE_BATCH ?? RENEWAL_BATCH_SIZE);
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? RENEWAL_CONCURRENCY);

/** The statement's kind, as its first words say. */
const STATEMENT_KIND = new RegExp(
  '^(insert into \\w+|update \\w+|delete from \\w+|with \\w+|select .{0,40}? from \\w+|' +
    'begin|commit|rollback|savepoint|release)',
);

function label(sql: string): string {
  // The head of the text names the statement (a batch's statements carry hundreds of kB of literals).
  const s = sql.slice(0, 400).replace(/\s+/g, ' ').trim().toLowerCase();
  if (s.startsWith('select s.* from subscriptions s')) return 'claim';
  if (s.includes('pg_advisory_xact_lock')) return 'ledger locks';
  if (s.includes('document_counters')) return 'numbered write (counter)';
  const m = STATEMENT_KIND.exec(s);
  return (m ? m[1] : s.slice(0, 50))!;
}

interface Query {
  conn: number;
  label: string;
  sql: string;
  start: number;
  end: number;
  bytes: number;
}

/** The transaction commands of a query (BEGIN, COMMIT, ROLLBACK as statements of their own), for the timeline. */
function commandsOf(sql: string): string {
  const head = sql.slice(0, 20).trim().toLowerCase();
  const commands = [...sql.slice(-400).matchAll(/;\s*(COMMIT|ROLLBACK|BEGIN)\b/gi)].map((m) => m[1]!.toLowerCase());
  return [head, ...commands].join('; ');
}

/** Every query run on the pool's connections, timed where pg sends and answers it. */
function recordQueries(queries: Query[]) {
  let connections = 0;
  return (conn: pg.Client) => {
    const id = ++connections;
    const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
    (conn as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const config = args[0] as string | { text: string };
      const sql = typeof config === 'string' ? config : (config?.text ?? '');
      // What is sent: the text and the bind values (a batch's rows travel as JSON in one or the other).
      const values = (typeof config === 'string' ? args[1] : ((config as { values?: unknown[] })?.values ?? args[1])) as
        | unknown[]
        | undefined;
      const bytes =
        sql.length +
        (Array.isArray(values) ? values.reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0) : 0);
      const q: Query = { conn: id, label: label(sql), sql: commandsOf(sql), start: performance.now(), end: 0, bytes };
      queries.push(q);
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (...r: unknown[]) => void;
        args[last] = (...r: unknown[]) => {
          q.end = performance.now();
          callback(...r);
        };
        return query(...args);
      }
      const answer = query(...args);
      if (answer && typeof (answer as Promise<unknown>).then === 'function')
        (answer as Promise<unknown>).then(
          () => (q.end = performance.now()),
          () => (q.end = performance.now()),
        );
      return answer;
    };
  };
}

async function main() {
  const url = await startBenchDatabase();
  const explain = process.env.PROFILE_EXPLAIN === '1';
  const queries: Query[] = [];
  const record = recordQueries(queries);
  let batchNo = 0;
  const plans: string[] = [];
  const knex: Knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'billing' },
    pool: {
      min: 0,
      max: 4,
      afterCreate: (conn: pg.Client, cb: (err: Error | null, conn: pg.Client) => void) => {
        if (!explain) {
          record(conn);
          return cb(null, conn);
        }
        conn.on('notice', (n) => {
          if (batchNo === 10) plans.push(String(n.message));
        });
        conn.query(
          `load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on; set ` +
            `auto_explain.log_buffers = on; set auto_explain.log_level = notice; set auto_explain.log_timing = ` +
            `${process.env.PROFILE_EXPLAIN_TIMING === '1' ? 'on' : 'off'}`,
          (err) => {
            record(conn);
            cb(err, conn);
          },
        );
      },
    },
  });
  knex.on('query', (q: { sql: string }) => {
    // A batch begins with its claim.
    if (label(q.sql ?? '') === 'claim') batchNo++;
  });
  const { customerIds, planIds } = await seedRows(knex);
  await knex('webhook_endpoints').insert({
    url: 'https://receiver.bench.invalid/hook',
    events: ['invoice.created'],
    secret: 'whsec_bench_secret_0123456789abcdef',
  });
  // A what-if on the schema before the rows exist (a fillfactor, an index dropped): PROFILE_SQL='alter table ...; drop
  // index ...'.
  if (process.env.PROFILE_SQL) await knex.raw(process.env.PROFILE_SQL);
  await seedDueSubscriptions(knex, customerIds, planIds, COUNT);
  await knex.raw('checkpoint');

  const pgPids = () => serverPids(knex);
  const kinds = async () =>
    new Map(
      (
        (await knex.raw(`select pid, backend_type from pg_stat_activity`)).rows as {
          pid: number;
          backend_type: string;
        }[]
      ).map((r) => [r.pid, r.backend_type]),
    );
  const cpuByKind = async (pids: number[]) => {
    const kindOf = await kinds();
    const by = new Map<string, number>();
    for (const pid of pids) by.set(kindOf.get(pid) ?? 'gone', (by.get(kindOf.get(pid) ?? 'gone') ?? 0) + cpuOf([pid]));
    return by;
  };
  const walAt = async () => (await knex.raw(`select pg_current_wal_lsn()::text as lsn`)).rows[0].lsn as string;
  const pidsBefore = await pgPids();
  const pgCpuBefore = cpuOf(pidsBefore);
  const kindsBefore = await cpuByKind(pidsBefore);
  const walBefore = await walAt();
  queries.length = 0;
  const profiler = process.env.PROFILE_CPU || process.env.PROFILE_HEAP ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    if (process.env.PROFILE_CPU) {
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    if (process.env.PROFILE_HEAP) {
      await profiler.post('HeapProfiler.enable');
      const keepAll = { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
      await profiler.post('HeapProfiler.startSampling', { samplingInterval: 4096, ...keepAll });
    }
  }
  const nodeBefore = process.cpuUsage();
  const started = performance.now();
  const result = await renewDueSubscriptions(knex, AS_OF, { batchSize: BATCH, concurrency: CONCURRENCY, clock: {} });
  const wall = performance.now() - started;
  const node = process.cpuUsage(nodeBefore);
  if (process.env.PROFILE_CPU)
    writeFileSync(process.env.PROFILE_CPU, JSON.stringify((await profiler!.post('Profiler.stop')).profile));
  if (process.env.PROFILE_HEAP)
    writeFileSync(
      process.env.PROFILE_HEAP,
      JSON.stringify((await profiler!.post('HeapProfiler.stopSampling')).profile),
    );
  const ran = queries.filter((q) => q.end > 0 && q.start >= started);
  const pids = [...new Set([...pidsBefore, ...(await pgPids())])];
  const pgCpu = cpuOf(pids) - pgCpuBefore;
  const kindsAfter = await cpuByKind(pids);
  const wal = Number(
    (await knex.raw(`select pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn) as n`, [walBefore])).rows[0].n,
  );

  console.log(JSON.stringify(result));
  const batches = result.batches;
  console.log(
    `renewals ${COUNT} in ${wall.toFixed(0)} ms = ${(COUNT / (wall / 1000)).toFixed(0)}/s; batches ${batches} of ` +
      `${BATCH}, ${CONCURRENCY} in flight; queries ${ran.length} (${(ran.length / batches).toFixed(1)}/batch)`,
  );
  console.log(
    `CPU per batch: Node ${((node.user + node.system) / 1000 / batches).toFixed(1)} ms, PostgreSQL ` +
      `${((pgCpu * 1000) / batches).toFixed(1)} ms (all its processes); WAL ${(wal / COUNT).toFixed(0)} bytes per ` +
      `renewal`,
  );

  const kindShares = [...kindsAfter].map(
    ([k, v]) => `${k} ${(((v - (kindsBefore.get(k) ?? 0)) * 1000) / batches).toFixed(1)} ms`,
  );
  console.log(`PostgreSQL CPU per batch by process kind: ${kindShares.join(', ')}`);
  // Per connection: the locks are held from the end of the query that took the first of them (the ledger lock,
  // else the counter; its own wait is not holding) to the end of the query that committed.
  const byConn = new Map<number, Query[]>();
  for (const q of ran) byConn.set(q.conn, [...(byConn.get(q.conn) ?? []), q]);
  const holding: { from: number; to: number }[] = [];
  for (const list of byConn.values()) {
    let from: number | undefined;
    for (const q of list) {
      if (from === undefined && (q.label === 'ledger locks' || q.label === 'numbered write (counter)')) from = q.end;
      if (/(^|;\s*)commit\b/.test(q.sql) && from !== undefined) {
        holding.push({ from, to: q.end });
        from = undefined;
      }
    }
  }
  const union = (spans: { from: number; to: number }[]) => {
    let total = 0;
    let end = -Infinity;
    for (const s of [...spans].sort((a, b) => a.from - b.from)) {
      if (s.to <= end) continue;
      total += s.to - Math.max(s.from, end);
      end = s.to;
    }
    return total;
  };
  const mean = (spans: { from: number; to: number }[]) =>
    spans.reduce((t, s) => t + s.to - s.from, 0) / Math.max(1, spans.length);
  console.log(
    `locks held per batch ${mean(holding).toFixed(1)} ms (from the first lock taken to commit); some batch holding ` +
      `them ${union(holding).toFixed(0)} ms = ${((100 * union(holding)) / wall).toFixed(0)}% of the run`,
  );
  console.log(
    `batch open (BEGIN to COMMIT) ${mean(transactions(byConn)).toFixed(1)} ms; two or more batches open ` +
      `${(overlap(transactions(byConn))).toFixed(0)} ms = ` +
      `${((100 * overlap(transactions(byConn))) / wall).toFixed(0)}% of the run`,
  );

  const stats = new Map<string, { n: number; ms: number; bytes: number }>();
  for (const q of ran) {
    const s = stats.get(q.label) ?? { n: 0, ms: 0, bytes: 0 };
    s.n += 1;
    s.ms += q.end - q.start;
    s.bytes += q.bytes;
    stats.set(q.label, s);
  }
  for (const [l, s] of [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms))
    console.log(
      `${(s.ms / batches).toFixed(1).padStart(8)} ms/batch ${String(s.n).padStart(6)}x ` +
        `${(s.bytes / batches / 1024).toFixed(0).padStart(5)} kB/batch sent  ${l}`,
    );
  if (process.env.PROFILE_WAL === '1') {
    // Where the WAL went, per relation: record bytes and full-page images (pg_walinspect).
    await knex.raw('create extension if not exists pg_walinspect');
    const walAfter = await walAt();
    const rows = (
      await knex.raw(
        `select coalesce(c.relname, b.relfilenode::text) as relation, count(*) as blocks, sum(b.block_data_length + case
          when b.block_id = 0 then b.record_length - b.block_data_length - b.block_fpi_length else 0 end)::bigint
            as data,
              sum(b.block_fpi_length)::bigint as fpi, count(*) filter (where b.block_fpi_length > 0) as fpis
         from pg_get_wal_block_info(?::pg_lsn, ?::pg_lsn, false) b left join pg_class c on c.relfilenode = b.relfilenode
        group by 1 order by sum(b.block_data_length + b.block_fpi_length) desc limit 25`,
        [walBefore, walAfter],
      )
    ).rows as { relation: string; blocks: string; data: string; fpi: string; fpis: string }[];
    for (const r of rows)
      console.log(
        `WAL ${r.relation.padEnd(44)} blocks ${String(r.blocks).padStart(7)}  data ` +
          `${(Number(r.data) / COUNT).toFixed(0).padStart(5)} B/renewal  FPI ` +
          `${(Number(r.fpi) / COUNT).toFixed(0).padStart(5)} B/renewal (${r.fpis} images)`,
      );
  }
  if (process.env.PROFILE_TIMELINE)
    writeFileSync(process.env.PROFILE_TIMELINE, ran.map(({ sql: _sql, ...q }) => JSON.stringify(q)).join('\n'));
  if (explain)
    for (const p of plans)
      console.log(
        `----\n${p.replace(/Query Parameters: .*\n/, '').replace(/Query Text: [\s\S]*?\n(?=[A-Z][a-z]+[ (])/, '')}`,
      );
  await knex.destroy();
}

/** Each batch's span on its connection, BEGIN to the query that commits. */
function transactions(byConn: Map<number, Query[]>): { from: number; to: number }[] {
  const spans: { from: number; to: number }[] = [];
  for (const list of byConn.values()) {
    let from: number | undefined;
    for (const q of list) {
      if (from === undefined && /^begin/.test(q.sql.trim())) from = q.start;
      if (from !== undefined && /(^|;\s*)(commit|rollback)\b/.test(q.sql.trim())) {
        spans.push({ from, to: q.end });
        from = undefined;
      }
    }
  }
  return spans;
}

/** How long two or more of these spans were open at once. */
function overlap(spans: { from: number; to: number }[]): number {
  const edges = spans
    .flatMap((s) => [
      { at: s.from, d: 1 },
      { at: s.to, d: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let since = 0;
  let total = 0;
  for (const e of edges) {
    if (open >= 2) total += e.at - since;
    open += e.d;
    since = e.at;
  }
  return total;
}

try {
  await main();
} finally {
  await cleanUp();
}
