/**
 * The cron endpoint (D-80, D-81): the secret, enqueue-or-join, asOf only with LIFECYCLE_ALLOW_AS_OF=true (issue 33;
 * the suite sets it, test/run.ts), and npm run lifecycle.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { request } from '../helpers/http.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { makePlan, newCustomer } from '../subscriptions/fixtures.ts';
import { CRON_SECRET, cron, countRows } from './fixtures.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp({ CRON_SECRET });
});
test.after.always(async () => app?.close());

const sweepJobs = () => countRows(app.db, 'pgboss.job', (q) => q.where({ name: 'lifecycle.sweep' }));
const runs = () => app.db('lifecycle_runs').orderBy('created_at');

test.serial('a missing or wrong X-Cron-Secret is 401 invalid_cron_secret and enqueues nothing', async (t) => {
  for (const secret of [null, 'wrong', `${CRON_SECRET}x`, '']) {
    const res = await cron(app, { secret, wait: true, asOf: '2025-01-01' });
    t.is(res.status, 401, `${secret}: ${res.text}`);
    t.is(res.body.error.code, 'invalid_cron_secret');
  }
  t.is((await runs()).length, 0);
  t.is(await sweepJobs(), 0);
});

test.serial('bad input is 400 and enqueues nothing', async (t) => {
  for (const [path, body] of [
    ['', { asOf: 'yesterday' }],
    ['', { asOf: 20250101 }],
    ['?wait=maybe', {}],
  ] as const) {
    const res = await fetch(`${app.baseUrl}/api/billing/cron/lifecycle${path}`, {
      method: 'POST',
      headers: { 'x-cron-secret': CRON_SECRET, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    t.is(res.status, 400);
    t.is(((await res.json()) as { error: { code: string } }).error.code, 'invalid_request');
  }
  t.is((await runs()).length, 0);
  t.is(await sweepJobs(), 0);
});

test.serial('a JSON null body is 400 invalid_request, not an empty one: no sweep runs (issue 33)', async (t) => {
  const res = await request(app.baseUrl, '/api/billing/cron/lifecycle?wait=true', {
    method: 'POST',
    headers: { 'x-cron-secret': CRON_SECRET, 'content-type': 'application/json' },
    rawBody: 'null',
  });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'invalid_request');
  t.is((await runs()).length, 0);
  t.is(await sweepJobs(), 0);
});

test.serial('202 {jobId}; calls while it is queued join it: one run, one job, even when they race', async (t) => {
  const first = await cron(app, { asOf: '2025-03-01' });
  t.is(first.status, 202, first.text);
  t.like(first.body, { status: 'queued' });
  t.regex(first.body.jobId, /^[0-9a-f-]{36}$/);
  const racing = await Promise.all(Array.from({ length: 8 }, () => cron(app, { asOf: '2025-04-01' })));
  t.true(racing.every((r) => r.status === 202 && r.body.jobId === first.body.jobId));
  t.is((await runs()).length, 1);
  t.is(await sweepJobs(), 1);
  const [run] = await runs();
  t.is(run.as_of.toISOString(), '2025-03-01T00:00:00.000Z', 'the joined run keeps its own asOf');
  const job = (await app.db.raw(`select id, data from pgboss.job where name = 'lifecycle.sweep'`)).rows[0];
  t.deepEqual([job.id, job.data], [run.id, { runId: run.id }]);
});

test.serial(
  'npm run lifecycle needs no worker: it takes over the queued run, prints its summary; the job then does nothing',
  async (t) => {
    const [queued] = await runs();
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/lifecycle-cli.ts'], {
      env: { ...process.env, DATABASE_URL: app.database.url, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
    });
    const summary = JSON.parse(stdout);
    t.like(summary, { jobId: queued.id, asOf: '2025-03-01T00:00:00.000Z', invoicesCreated: 0, errors: 0 });
    t.like(await app.db('lifecycle_runs').where({ id: queued.id }).first(), { status: 'succeeded', job_id: null });
    // The queued job, run by a worker now, finds its run taken over and finishes without sweeping.
    await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
    const deadline = Date.now() + 20_000;
    let state = '';
    while (Date.now() < deadline && state !== 'completed') {
      state = (await app.db.raw(`select state from pgboss.job where id = ?`, [queued.id])).rows[0].state;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.is(state, 'completed');
    t.is((await app.db('lifecycle_runs').where({ id: queued.id }).first()).attempts, 1);

    // A second CLI call opens and runs a fresh run of its own, as of its --as-of.
    const second = JSON.parse(
      (
        await promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', 'src/lifecycle-cli.ts', '--as-of', '2025-05-01'],
          {
            env: { ...process.env, DATABASE_URL: app.database.url, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
          },
        )
      ).stdout,
    );
    t.not(second.jobId, queued.id);
    t.is(second.asOf, '2025-05-01T00:00:00.000Z');
  },
);

test.serial('?wait=true answers 200 with the summary fields of D-80', async (t) => {
  const res = await cron(app, { asOf: '2025-06-01T08:00:00Z', wait: true });
  t.is(res.status, 200, res.text);
  for (const key of [
    'asOf',
    'invoicesCreated',
    'periodsAdvanced',
    'trialsEnded',
    'canceled',
    'charged',
    'chargeFailures',
    'invoicesOverdue',
    'licensesExpired',
    'dunning',
  ])
    t.true(key in res.body, key);
  t.is(res.body.asOf, '2025-06-01T08:00:00.000Z');
  t.like(await app.db('lifecycle_runs').where({ id: res.body.jobId }).first(), { status: 'succeeded' });
});

test.serial(
  'without LIFECYCLE_ALLOW_AS_OF (whatever NODE_ENV says) a body asOf is 400 naming it and changes nothing: no ' +
    'invoice raised, nothing marked overdue, no run; npm run lifecycle refuses --as-of',
  async (t) => {
    const off = await startTestApp({ CRON_SECRET, NODE_ENV: 'development', LIFECYCLE_ALLOW_AS_OF: 'false' });
    try {
      await registerWorkers(off.boss, off.deps, ['lifecycle'], jobHandlers);
      // Due by the probe's date: the subscription renews in December, its first invoice falls due before 2027-01-05.
      const customer = await newCustomer(off.db);
      const plan = await makePlan(off.db, '10.00');
      await createSubscription(
        off.db,
        { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
        SYSTEM_ACTOR,
        {
          now: new Date(Date.now() - 20 * 86_400_000),
        },
      );
      const invoices = async () => off.db('invoices').select('id', 'status').orderBy('id');
      const before = await invoices();
      t.true(before.length >= 1);

      for (const wait of [true, false]) {
        const res = await cron(off, { asOf: '2027-01-05', wait });
        t.is(res.status, 400, res.text);
        t.is(res.body.error.code, 'invalid_request');
        t.deepEqual(
          res.body.error.details.map((d: { path: string }) => d.path),
          ['asOf'],
        );
        t.regex(res.body.error.message, /LIFECYCLE_ALLOW_AS_OF/);
      }
      t.deepEqual(await invoices(), before, 'no invoice raised, none marked overdue');
      t.is(await countRows(off.db, 'lifecycle_runs'), 0);
      t.is(await countRows(off.db, 'pgboss.job', (q) => q.where({ name: 'lifecycle.sweep' })), 0);

      const cli = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/lifecycle-cli.ts', '--as-of', '2027-01-05'],
        {
          env: { ...process.env, DATABASE_URL: off.database.url, LIFECYCLE_ALLOW_AS_OF: '', LOG_LEVEL: 'silent' },
        },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      t.is(cli.code, 1);
      t.regex(cli.stderr, /--as-of.*LIFECYCLE_ALLOW_AS_OF/);
      t.deepEqual(await invoices(), before);
      t.is(await countRows(off.db, 'lifecycle_runs'), 0);

      // Without asOf the endpoint runs as of now.
      const now = await cron(off, { wait: true });
      t.is(now.status, 200, now.text);
    } finally {
      await off.close();
    }
  },
);

test.serial('LIFECYCLE_ALLOW_AS_OF=true decides, not NODE_ENV: in production the body asOf counts', async (t) => {
  const prod = await startTestApp({ CRON_SECRET, NODE_ENV: 'production', LIFECYCLE_ALLOW_AS_OF: 'true' });
  try {
    await registerWorkers(prod.boss, prod.deps, ['lifecycle'], jobHandlers);
    const res = await cron(prod, { asOf: '2020-01-01', wait: true });
    t.is(res.status, 200, res.text);
    t.is(res.body.asOf, '2020-01-01T00:00:00.000Z');
  } finally {
    await prod.close();
  }
});
