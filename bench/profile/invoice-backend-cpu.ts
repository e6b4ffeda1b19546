/**
 * Profiling aid for issue 20 (not part of `npm run bench`): the PostgreSQL backend's CPU (utime+stime from /proc) per
 * statement of an admin invoice creation, each run PROFILE_REQUESTS times serially on one connection: the session
 * check, the creation's query as the route sends it (BEGIN; set local; EXECUTE; COMMIT; flush), and its parts alone.
 * The creation's text is captured from one real request to an in-process app; EXPLAIN (ANALYZE, BUFFERS, WAL) of
 * its EXECUTE is printed once.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { cleanUp } from '../harness.ts';
import { startInProcessApp } from '../in-process-app.ts';
import { cpuTicks } from '../proc-cpu.ts';

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 2000);
const captured: string[] = [];
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  const text = typeof first === 'string' ? first : (first.text ?? '');
  if (text.includes('billing_hot_')) captured.push(text);
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

try {
  const { url, rows, base, cookie } = await startInProcessApp();
  const body = (i: number) =>
    JSON.stringify({
      customerId: rows.customerIds[i % rows.customerIds.length],
      taxRate: '8.25',
      lineItems: [
        { description: `Bench subscription ${i}`, quantity: 1, unitPrice: '49.00' },
        { description: 'Bench extra seats', quantity: 3, unitPrice: '9.99' },
      ],
    });
  const answer = await fetch(`${base}/api/billing/invoices`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: body(0),
  });
  if (answer.status !== 201) throw new Error(`creation answered ${answer.status}: ${await answer.text()}`);
  // The PREPARE is a query of its own, sent once before the first EXECUTE (db/hot-lock.ts transactionOn); then the
  // creation's query.
  const prepare = captured.find((text) => text.startsWith('PREPARE'))!;
  const full = captured.findLast((text) => !text.startsWith('PREPARE'))!;
  const parts = full.split(';\n');
  const captured0 = parts.find((p) => p.startsWith('EXECUTE'))!;
  const invoiceId = /"id":"([0-9a-f-]{36})"/.exec(captured0)![1]!;
  // Each run a new invoice: its id and its events' ids fresh.
  const fresh = (sql: string) =>
    sql
      .replaceAll(invoiceId, randomUUID())
      .replace(/evt_[A-Za-z0-9]+/g, () => `evt_${randomUUID().replaceAll('-', '')}`);
  const execute = captured0;
  const rest = () => fresh(full).split(';\n');
  console.log(
    `creation query: ${full.length} chars (${execute.length} EXECUTE), sent after its PREPARE of ${prepare.length} ` +
      `chars`,
  );

  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number;
  await client.query(prepare);

  const token = decodeURIComponent(/(?:^|; )session=([^;]+)/.exec(cookie)![1]!);
  const { createHash } = await import('node:crypto');
  const tokenHash = createHash('sha256').update(token).digest('hex');
  const cases: Array<[string, () => Promise<unknown>]> = [
    [
      'session check (prepared)',
      () =>
        client.query({
          name: 'session',
          text:
            `select s.id as session_id, u.id as user_id, u.email, u.role from sessions s join users u on u.id = ` +
            `s.user_id where s.token_hash = $1 and s.expires_at > now()`,
          values: [tokenHash],
        }),
    ],
    ['creation query as sent', () => client.query(rest().join(';\n'))],
    [
      '  without the flush',
      () =>
        client.query(
          rest()
            .filter((p) => !p.includes('pg_logical_emit_message'))
            .join(';\n'),
        ),
    ],
    ['  flush alone', () => client.query(`select pg_logical_emit_message(false, 'billing.flush', '', true)`)],
    ['  BEGIN; COMMIT', () => client.query('BEGIN; COMMIT')],
    ['  EXECUTE rolled back', () => client.query(`BEGIN; ${fresh(execute)}; ROLLBACK`)],
  ];
  for (const [name, run] of cases) {
    for (let i = 0; i < 200; i++) await run();
    const before = cpuTicks(pid);
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) await run();
    const ms = performance.now() - started;
    console.log(
      `${name.padEnd(28)} backend CPU ${(((cpuTicks(pid) - before) * 10) / REQUESTS).toFixed(3)} ms, wall ` +
        `${(ms / REQUESTS).toFixed(3)} ms`,
    );
  }
  // Warm by now (the generic plan, caches): the plan of one more EXECUTE, rolled back.
  const explain = await client.query(`begin; explain (analyze, buffers, wal, summary) ${fresh(execute)}; rollback`);
  console.log(
    (explain as unknown as { rows: { 'QUERY PLAN': string }[] }[])[1]!.rows.map((r) => r['QUERY PLAN']).join('\n'),
  );
  await client.end();
} catch (error) {
  console.error(error);
} finally {
  await cleanUp();
}
process.exit(0);
