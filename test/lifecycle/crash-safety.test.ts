/**
 * D-82: two sweeps at once, and a worker process SIGKILLed mid-sweep then resumed, create no duplicate
 * invoice or event, keep invoice numbers gapless, and end exactly where one uninterrupted sweep ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import test from 'ava';
import type { Knex } from 'knex';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { requestLifecycleRun } from '../../src/lifecycle/service.ts';
import { waitForRun } from '../../src/lifecycle/runs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { countRows, numberingProblems } from './fixtures.ts';

let app: TestApp;
let control: TestDatabase;
const children: ChildProcess[] = [];
test.before(async () => {
  app = await startTestApp();
  control = await createTestDatabase();
});
test.after.always(async () => {
  for (const child of children) child.kill('SIGKILL');
  await control?.drop();
  await app?.close();
});

const AS_OF = new Date('2025-06-20T00:00:00.000Z');

/**
 * The same fixture, with the same ids, in any database: `count` subscriptions due once (monthly, anchored in
 * May), a few catching up 3 periods, some with a coupon, some trialing, some scheduled to cancel, some paused,
 * an endpoint subscribed to every event, and (with `credit`) store credit that the first invoices of one
 * customer spend: which invoices those are depends on the order of renewal, the same in an interrupted run.
 */
async function seed(db: Knex, count: number, idOffset: number, credit = false): Promise<void> {
  const id = (n: number, kind: number) => `00000000-0000-4000-8${kind}00-${String(idOffset + n).padStart(12, '0')}`;
  await db('customers').insert(
    Array.from({ length: 50 }, (_, i) => ({ id: id(i, 1), name: `C${i}`, email: `c${idOffset}-${i}@crash.test` })),
  );
  await db('products').insert({ id: id(0, 2), name: 'P', product_type: 'saas', price: '10' });
  await db('plans').insert([
    {
      id: id(0, 3),
      product_id: id(0, 2),
      name: 'Monthly',
      pricing_model: 'flat',
      billing_cycle: 'monthly',
      base_price: '19.99',
      currency: 'USD',
    },
  ]);
  await db('coupons').insert({
    id: id(0, 4),
    code: `HALF${idOffset}`,
    percent_off: '50',
    duration: 'repeating',
    duration_in_cycles: 2,
  });
  if (credit)
    await db('credit_ledger').insert({
      customer_id: id(7, 1),
      currency: 'USD',
      amount: '30.00',
      kind: 'credit',
      description: 'goodwill',
    });
  await db('webhook_endpoints').insert({
    url: 'https://receiver.invalid/hook',
    events: ['*'],
    secret: 'whsec_crash_test_secret_0123456789',
  });
  const anchor = new Date('2025-05-15T09:00:00.000Z');
  const rows = Array.from({ length: count }, (_, n) => {
    const behind = n % 97 === 0;
    const a = behind ? new Date('2025-02-15T09:00:00.000Z') : anchor;
    return {
      id: id(n, 5),
      customer_id: id(n % 50, 1),
      plan_id: id(0, 3),
      status: n % 13 === 0 ? 'trialing' : n % 31 === 0 ? 'paused' : 'active',
      billing_cycle: 'monthly',
      billing_anchor: a,
      period_number: n % 13 === 0 ? -1 : 0,
      current_period_start: n % 13 === 0 ? new Date('2025-05-01T09:00:00.000Z') : a,
      current_period_end: n % 13 === 0 ? a : new Date(a.getTime() + (behind ? 28 : 31) * 86_400_000),
      trial_end: n % 13 === 0 ? a : null,
      cancel_at_period_end: n % 17 === 0,
      coupon_id: n % 5 === 0 ? id(0, 4) : null,
      created_at: new Date('2025-05-01T09:00:00.000Z'),
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await db('subscriptions').insert(rows.slice(i, i + 1000));
  await db.raw('analyze');
}

/** Everything a sweep writes, without what differs by nature between two runs (random ids, wall-clock times). */
async function endState(db: Knex) {
  const subs = await db('subscriptions')
    .orderBy('id')
    .select(
      'id',
      'status',
      'period_number',
      'current_period_start',
      'current_period_end',
      'canceled_at',
      'cancel_at_period_end',
      'coupon_cycles_used',
    );
  const invoices = await db('invoices')
    .orderBy('invoice_number')
    .select(
      'invoice_number',
      'subscription_id',
      'customer_id',
      'status',
      'total',
      'credit_applied',
      'period_start',
      'period_end',
      'due_date',
      'created_at',
      'overdue_at',
    );
  const lines = await db('invoice_line_items as l')
    .join('invoices as i', 'i.id', 'l.invoice_id')
    .orderBy(['i.invoice_number', 'l.position'])
    .select('i.invoice_number', 'l.position', 'l.description', 'l.unit_price', 'l.amount');
  const events = (
    await db.raw(
      `select type, data - 'invoiceId' - 'updatedAt' as data from events order by type, data->>'invoiceNumber', ` +
        `data->>'id'`,
    )
  ).rows;
  const ledger = await db('credit_ledger')
    .orderBy(['customer_id', 'amount'])
    .select('customer_id', 'amount', 'kind', 'description');
  return { subs, invoices, lines, events, ledger, deliveries: await countRows(db, 'webhook_deliveries') };
}

test.serial(
  'two sweeps at once: no duplicate invoice or event, gapless numbers, the same end state as one sweep',
  async (t) => {
    await seed(control.knex, 1200, 0);
    await seed(app.db, 1200, 0);
    const deps = { ...app.deps, db: control.knex };
    const one = await runLifecycleSweep(deps, AS_OF, { batchSize: 50 });
    t.is(one.errors, 0);

    const depsB = { ...app.deps };
    const [a, b] = await Promise.all([
      runLifecycleSweep(depsB, AS_OF, { batchSize: 50 }),
      runLifecycleSweep(depsB, AS_OF, { batchSize: 37 }),
    ]);
    t.is(a.errors + b.errors, 0);
    t.true(
      a.invoicesCreated > 0 && b.invoicesCreated > 0,
      `both sweeps did part of the work: ${a.invoicesCreated} + ${b.invoicesCreated}`,
    );
    t.is(a.invoicesCreated + b.invoicesCreated, one.invoicesCreated);
    t.is(a.canceled + b.canceled, one.canceled);
    t.is(a.trialsEnded + b.trialsEnded, one.trialsEnded);
    t.is(a.invoicesOverdue + b.invoicesOverdue, one.invoicesOverdue);
    const dupes = await app.db.raw(
      'select subscription_id, period_start from invoices group by 1, 2 having count(*) > 1',
    );
    t.deepEqual(dupes.rows, []);
    t.deepEqual(await numberingProblems(app.db), []);
    const stateA = await endState(app.db);
    const stateB = await endState(control.knex);
    // Numbers follow each sweep's own order, so compare everything but them.
    const unnumbered = (s: Awaited<ReturnType<typeof endState>>) => ({
      ...s,
      invoices: s.invoices
        .map(({ invoice_number: _n, ...rest }) => rest)
        .sort((x, y) =>
          `${x.subscription_id}${x.period_start.toISOString()}`.localeCompare(
            `${y.subscription_id}${y.period_start.toISOString()}`,
          ),
        ),
      lines: s.lines.length,
      events: s.events
        .map(
          (e: { type: string; data: Record<string, unknown> }) =>
            `${e.type} ${JSON.stringify({ ...e.data, invoiceNumber: undefined })}`,
        )
        .sort(),
    });
    t.deepEqual(unnumbered(stateA), unnumbered(stateB));
    t.true(stateA.invoices.length > 1200, 'catch-up invoices too');
  },
);

test.serial(
  'a worker SIGKILLed mid-sweep: the job is retried, the run resumes as of the same instant, and ends as an ' +
    'uninterrupted sweep',
  async (t) => {
    // Fresh data in both databases for this scenario.
    for (const db of [app.db, control.knex]) {
      await db.raw(
        'truncate webhook_delivery_attempts, webhook_deliveries, webhook_endpoints, events, credit_ledger, ' +
          'invoice_line_items, invoices, subscriptions, coupons, plans, products, customers, document_counters, ' +
          'lifecycle_runs cascade',
      );
    }
    const COUNT = 6000;
    await seed(control.knex, COUNT, 10_000, true);
    await seed(app.db, COUNT, 10_000, true);
    const uninterrupted = await runLifecycleSweep({ ...app.deps, db: control.knex }, AS_OF);

    // A short heartbeat and no retry delay, so the test sees the retry within seconds.
    await app.boss.updateQueue('lifecycle.sweep', { heartbeatSeconds: 10, retryDelay: 0 });
    const { run } = await requestLifecycleRun(app.db, AS_OF, SYSTEM_ACTOR);
    const first = startWorker('killed-sweep-worker');
    const invoices = () => countRows(app.db, 'invoices');
    const deadline = Date.now() + 60_000;
    let done = 0;
    while (Date.now() < deadline && done === 0) {
      done = await invoices();
      await new Promise((r) => setTimeout(r, 20));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    // A statement (and COMMIT) already sent when the process died still runs to its end in its session, which
    // then sees the connection gone and exits: what the killed worker did is counted once its sessions are gone.
    const atKill = await countWhenGone(app.db, 'killed-sweep-worker', invoices);
    t.true(
      atKill > 0 && atKill < uninterrupted.invoicesCreated,
      `killed half-way: ${atKill} of ${uninterrupted.invoicesCreated} invoices`,
    );
    t.like(await app.db('lifecycle_runs').where({ id: run.id }).first(), { status: 'running', attempts: 1 });

    // Past the heartbeat the supervisor (any pg-boss instance's) fails the job, and it is up for retry.
    await new Promise((r) => setTimeout(r, 11_000));
    await app.boss.supervise('lifecycle.sweep');
    const second = startWorker('resuming-sweep-worker');
    const finished = await waitForRun(app.db, run.id, 90_000);
    t.is(finished?.status, 'succeeded', second.output());
    t.is(finished?.attempts, 2);
    t.is(finished!.as_of!.toISOString(), AS_OF.toISOString());
    const resumed = finished!.summary as unknown as { invoicesCreated: number; errors: number };
    t.is(resumed.errors, 0);
    t.is(
      atKill + resumed.invoicesCreated,
      uninterrupted.invoicesCreated,
      'the resumed run created only what was missing',
    );
    second.child.kill('SIGTERM');
    await second.exited;

    t.deepEqual(await numberingProblems(app.db), []);
    t.deepEqual(await endState(app.db), await endState(control.knex));
  },
);

/** `count()` once no session of the process that connected as `applicationName` is left in the database. */
async function countWhenGone(db: Knex, applicationName: string, count: () => Promise<number>): Promise<number> {
  const sessions = () =>
    db
      .raw(
        'select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ?',
        [applicationName],
      )
      .then((r) => Number(r.rows[0].n));
  const left = await waitFor(sessions, (n) => n === 0, 30_000);
  if (left > 0) throw new Error(`${left} sessions of ${applicationName} still open`);
  return count();
}

/** A lifecycle worker process whose sessions show `applicationName` in pg_stat_activity. */
function startWorker(applicationName: string): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const url = new URL(app.database.url);
  url.searchParams.set('application_name', applicationName);
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/lifecycle.ts'], {
    env: { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return {
    child,
    output: () => output.slice(-3000),
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
}
