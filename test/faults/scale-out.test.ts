/**
 * The scale-out run (issue 20): on one database, two web processes (clients alternating between their ports), two
 * webhooks, two provider_events and two lifecycle workers, started as production starts them (Procfile roles via
 * roleArgs), and under one concurrent load spread over both web ports:
 * - new devices validating at a license's limit: exactly the limit activated;
 * - the same signed provider_a event posted to both web processes several times at once: one payment per event;
 * - concurrent cron sweeps through both web processes (they join one run, D-80), then one run swept by both lifecycle
 *   workers at once (the first frozen mid-batch past its heartbeat, the second resuming the run, the first let go):
 *   one invoice per subscription period;
 * - a mixed write load (customers, invoices with a replay through the other process, subscriptions): every accepted
 *   write present once, invoice numbers gapless and unique;
 * - webhook deliveries to a loopback receiver: each event once per attempt of its schedule, whichever worker sent it;
 * - the public license rate limit held across both web processes (needs the limit shared in PostgreSQL, i20-shared).
 * The scenario runs once; each test below judges one property of it and logs its figures.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { request, type JsonResponse } from '../helpers/http.ts';
import { postProviderA, PROVIDER_SECRETS, providerAEvent } from '../helpers/provider-events.ts';
import { CRON_SECRET, numberingProblems } from '../lifecycle/fixtures.ts';
import { startReceiver, type Received } from '../webhooks/receiver.ts';
import { adminCookie, postUntilAnswered } from './clients.ts';
import { minorUnits, monthsFrom, seedSubscriptions, Traffic, watchWorkerLog } from './scale-out-fixtures.ts';
import { databaseOfThisFile, sleep, startWeb, startWorker, waitUntil, type ServiceProcess } from './processes.ts';

// Registered before databaseOfThisFile's hook, so the test's own connections close before its database is dropped
// (its processes, frozen or not, are SIGKILLed by that hook, whatever happened).
const closers: Array<() => Promise<void>> = [];
test.after.always(async () => {
  for (const close of closers) await close().catch(() => {});
});
const testDatabase = databaseOfThisFile(test);

/** Public license requests per minute per client IP while this runs (the setting), small so a burst passes it. */
const RATE_LIMIT = 8;
const LICENSES = 4;
const MAX_ACTIVATIONS = 3;
const DEVICES_PER_LICENSE = 10;
const PAID_INVOICES = 10;
/** Copies of each provider event posted to each web process, all at once. */
const EVENT_COPIES = 3;
const SUBSCRIPTIONS = 16;
/** Cron rounds, each a month further on; each round sends CRON_CALLS at once, alternating ports. */
const SWEEP_ROUNDS = 3;
/**
 * Then the stalled round, swept by both lifecycle workers, this many months on: always next year, so its invoice
 * counter row is one that nothing but that sweep uses while the test holds it.
 */
const STALLED_MONTHS = 13;
/**
 * Subscriptions first due in the stalled round, written directly as an import would (period 0 without an invoice;
 * 600 through the API would take most of a minute here): more than one renewal batch (500), so the worker resuming
 * the run has batches of its own to renew.
 */
const LATE_SUBSCRIPTIONS = 600;
const CRON_CALLS = 4;
const LOAD_CLIENTS = 4;
const MIN_LOAD_ITERATIONS = 3;
/** Retry delays of the webhooks workers (WEBHOOK_RETRY_SCHEDULE_SECONDS): 3 attempts, 1 s apart. */
const RETRY_SCHEDULE = [1, 1];

/** Eight processes starting at once on a busy 2-core machine: ~40-60 s seen, so more than the usual minute. */
const START_TIMEOUT_MS = 180_000;

const ENV = {
  ...PROVIDER_SECRETS,
  CRON_SECRET,
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE_SECONDS: RETRY_SCHEDULE.join(','),
  // Behind one proxy, as scaled-out web processes are: the client IP is X-Forwarded-For's last entry.
  TRUST_PROXY: 'true',
  PROXY_HOPS: '1',
};

async function runScenario() {
  const started = Date.now();
  const database = testDatabase();
  const db = database.knex;
  const count = async (sql: string, bindings: readonly Knex.RawBinding[] = []) =>
    Number((await db.raw(sql, bindings)).rows[0].n);

  // Every process at once (on a loaded machine each takes seconds to start), and meanwhile the subscriptions first
  // due in the stalled round: their period starts after the third round's asOf and ends before the fourth's.
  let seedMs = 0;
  const seeding = seedSubscriptions(
    db,
    LATE_SUBSCRIPTIONS,
    monthsFrom(new Date(started), STALLED_MONTHS - 1, 0),
  ).finally(() => (seedMs = Date.now() - started));
  const [web1, web2, ...workers] = await Promise.all([
    startWeb(database.url, { env: { ...ENV, LOG_LEVEL: 'warn' }, readyTimeoutMs: START_TIMEOUT_MS }),
    startWeb(database.url, { env: { ...ENV, LOG_LEVEL: 'warn' }, readyTimeoutMs: START_TIMEOUT_MS }),
    ...(['webhooks', 'webhooks', 'provider_events', 'provider_events', 'lifecycle', 'lifecycle'] as const).map(
      (group) => startWorker(group, database.url, ENV, { readyTimeoutMs: START_TIMEOUT_MS }),
    ),
  ]);
  const webs = [web1!, web2!];
  const workerLogs = workers.map((w) => ({ name: w.name, pid: w.pid, seen: watchWorkerLog(w) }));
  const lifecycleWorkers = workers.filter((w) => w.name === 'worker-lifecycle');
  const lateSubscriptions = await seeding;
  const startupMs = Date.now() - started;
  // A queue client of the test's own: a sweep job's heartbeat short enough to lapse within the run (pg-boss's
  // minimum, 10 s; jobs take it when created) and its retry at once; and the supervisor's pass on demand. A pass
  // fails lapsed jobs only when the queue's last pass (the workers' own, every 60 s) is older than the calling
  // instance's monitor interval: 1 s here.
  const boss = new PgBoss({
    connectionString: database.url,
    migrate: false,
    supervise: false,
    schedule: false,
    monitorIntervalSeconds: 1,
    max: 2,
  });
  boss.on('error', () => {});
  await boss.start();
  closers.push(() => boss.stop({ graceful: false }));
  await boss.updateQueue('lifecycle.sweep', { heartbeatSeconds: 10, retryDelay: 0 });
  const traffic = new Traffic();
  const web = (i: number) => webs[i % 2]!;

  // Set-up, through both processes. Endpoints come first, so every event of the run has its deliveries.
  const cookie = await adminCookie(web1!.baseUrl, db);
  const admin = async (
    i: number,
    path: string,
    options: { method?: string; body?: unknown } = {},
    expected = 201,
  ): Promise<JsonResponse> => {
    const res = await request(web(i).baseUrl, path, { cookie, ...options });
    traffic.count(web(i), 'set-up');
    if (res.status !== expected) throw new Error(`set-up ${path}: ${res.status} ${res.text}`);
    return res;
  };
  await admin(0, '/api/settings', { method: 'PUT', body: { 'licenses.rate_limit_per_minute': RATE_LIMIT } }, 200);
  // Arrival times per path and event: retries must keep to the schedule.
  const arrivals = new Map<string, number[]>();
  const arrive = (r: Received) => {
    const key = `${r.path} ${String(r.headers['x-event-id'])}`;
    arrivals.set(key, [...(arrivals.get(key) ?? []), Date.now()]);
  };
  const flakySeen = new Set<string>();
  const receiver = await startReceiver({
    '/ok': (r, res) => {
      arrive(r);
      res.writeHead(200).end('ok');
    },
    '/flaky': (r, res) => {
      arrive(r);
      const id = String(r.headers['x-event-id']);
      if (flakySeen.has(id)) res.writeHead(200).end('ok');
      else {
        flakySeen.add(id);
        res.writeHead(500).end('the first attempt fails');
      }
    },
    '/down': (r, res) => {
      arrive(r);
      res.writeHead(500).end('down');
    },
  });
  closers.push(receiver.close);
  // Events before the endpoints (the seeded subscriptions') have no deliveries; every later one has.
  const eventsBeforeEndpoints = new Set(await db('events').pluck('id'));
  const endpoints = {
    ok: (
      await admin(0, '/api/billing/webhooks/endpoints', {
        body: { url: receiver.url('/ok'), events: ['*'], secret: 'whsec_scaleout_ok_0123456789' },
      })
    ).body.id as string,
    flaky: (
      await admin(1, '/api/billing/webhooks/endpoints', {
        body: { url: receiver.url('/flaky'), events: ['payment.succeeded'], secret: 'whsec_scaleout_flaky_0123456789' },
      })
    ).body.id as string,
    down: (
      await admin(0, '/api/billing/webhooks/endpoints', {
        body: { url: receiver.url('/down'), events: ['license.created'], secret: 'whsec_scaleout_down_0123456789' },
      })
    ).body.id as string,
  };
  const licensed = (
    await admin(1, '/api/products', { body: { name: 'Scale-out desktop', productType: 'licensed', price: '99.00' } })
  ).body;
  const saas = (
    await admin(0, '/api/products', { body: { name: 'Scale-out cloud', productType: 'saas', price: '10' } })
  ).body;
  const plan = (
    await admin(1, '/api/billing/plans', {
      body: {
        productId: saas.id,
        name: 'Monthly',
        pricingModel: 'flat',
        billingCycle: 'monthly',
        basePrice: '29.90',
        currency: 'USD',
      },
    })
  ).body;
  const newCustomer = async (i: number, tag: string) =>
    (
      await admin(i, '/api/customers', {
        body: { name: `Set-up ${tag}`, email: `setup-${tag}-${randomUUID()}@example.test` },
      })
    ).body.id as string;
  const licenses = await Promise.all(
    Array.from(
      { length: LICENSES },
      async (_, i) =>
        (
          await admin(i, '/api/licenses', {
            body: {
              customerId: await newCustomer(i, `lic${i}`),
              productId: licensed.id,
              maxActivations: MAX_ACTIVATIONS,
            },
          })
        ).body,
    ),
  );
  const payable = await Promise.all(
    Array.from({ length: PAID_INVOICES }, async (_, i) => {
      const customerId = await newCustomer(i + 1, `inv${i}`);
      return (
        await admin(i, '/api/billing/invoices', {
          body: {
            customerId,
            status: 'issued',
            lineItems: [{ description: `Order ${i}`, quantity: 1, unitPrice: `${12 + i}.34` }],
          },
        })
      ).body;
    }),
  );
  const setupSubscriptions: string[] = await Promise.all(
    Array.from({ length: SUBSCRIPTIONS }, async (_, i) => {
      const customerId = await newCustomer(i, `sub${i}`);
      return (
        await admin(i + 1, '/api/billing/subscriptions', {
          body: { customerId, planId: plan.id, billingCycle: 'monthly' },
        })
      ).body.id as string;
    }),
  );
  const setupMs = Date.now() - started - startupMs;
  const loadStarted = Date.now();

  // The mixed write load, until every other phase is done (and a few iterations at least).
  let loadOn = true;
  const load = {
    customers: [] as string[],
    invoices: [] as string[],
    subscriptions: [] as string[],
    replays: 0,
    problems: [] as string[],
  };
  const loadClient = async (n: number) => {
    for (let i = 0; loadOn || i < MIN_LOAD_ITERATIONS; i++) {
      const [a, b] = [web(n + i), web(n + i + 1)];
      const key = `scale-${n}-${i}`;
      const customer = await postUntilAnswered(a.baseUrl, '/api/customers', {
        cookie,
        key: `${key}-customer`,
        body: { name: `Load ${n}.${i}`, email: `load-${n}-${i}-${randomUUID()}@example.test` },
      });
      traffic.count(a, 'customer');
      if (customer.response.status !== 201) {
        load.problems.push(`customer ${key}: ${customer.response.status} ${customer.response.text}`);
        continue;
      }
      load.customers.push(customer.response.body.id);
      const invoiceBody = {
        customerId: customer.response.body.id,
        status: 'issued',
        lineItems: [
          {
            description: `Seat ${n}.${i}`,
            quantity: 1 + (i % 3),
            unitPrice: `${20 + n}.${String(i % 100).padStart(2, '0')}`,
          },
        ],
      };
      const invoice = await postUntilAnswered(a.baseUrl, '/api/billing/invoices', {
        cookie,
        key: `${key}-invoice`,
        body: invoiceBody,
      });
      traffic.count(a, 'invoice');
      if (invoice.response.status !== 201) {
        load.problems.push(`invoice ${key}: ${invoice.response.status} ${invoice.response.text}`);
        continue;
      }
      load.invoices.push(invoice.response.body.id);
      // The same request again through the other process: its stored answer, not a second invoice.
      const replay = await postUntilAnswered(b.baseUrl, '/api/billing/invoices', {
        cookie,
        key: `${key}-invoice`,
        body: invoiceBody,
      });
      traffic.count(b, 'invoice replay');
      if (
        replay.response.status !== 201 ||
        replay.response.body.id !== invoice.response.body.id ||
        replay.response.headers.get('idempotent-replayed') !== 'true'
      ) {
        load.problems.push(
          `replay ${key}: ${replay.response.status} ${replay.response.body?.id} ` +
            `replayed=${replay.response.headers.get('idempotent-replayed')}`,
        );
      } else load.replays += 1;
      const subscription = await postUntilAnswered(b.baseUrl, '/api/billing/subscriptions', {
        cookie,
        key: `${key}-subscription`,
        body: { customerId: customer.response.body.id, planId: plan.id, billingCycle: 'monthly' },
      });
      traffic.count(b, 'subscription');
      if (subscription.response.status !== 201)
        load.problems.push(`subscription ${key}: ${subscription.response.status} ${subscription.response.text}`);
      else load.subscriptions.push(subscription.response.body.id);
    }
  };
  const loadClients = Array.from({ length: LOAD_CLIENTS }, (_, n) => loadClient(n));

  // New devices at each license's limit, all at once, alternating processes, each from an address of its own.
  const validations = async () => {
    const t0 = Date.now();
    const answers = await Promise.all(
      licenses.flatMap((license, l) =>
        Array.from({ length: DEVICES_PER_LICENSE }, async (_, d) => {
          const i = l * DEVICES_PER_LICENSE + d;
          const res = await request(web(i).baseUrl, '/api/licenses/validate', {
            body: { licenseKey: license.licenseKey, deviceId: `device-${l}-${d}`, deviceName: `Device ${d}` },
            headers: { 'x-forwarded-for': `198.51.${100 + l}.${d + 1}` },
          });
          traffic.count(web(i), 'validate');
          return {
            license: license.id as string,
            status: res.status,
            valid: res.body?.valid === true,
            error: res.body?.error as string | undefined,
          };
        }),
      ),
    );
    return { answers, ms: Date.now() - t0 };
  };

  // Each provider event posted EVENT_COPIES times to each process at once.
  const providerEvents = async () => {
    const t0 = Date.now();
    const posts = await Promise.all(
      payable.flatMap((invoice) => {
        const event = providerAEvent.checkoutCompleted(invoice.id, minorUnits(invoice.total), invoice.currency);
        return Array.from({ length: 2 * EVENT_COPIES }, async (_, c) => {
          const res = await postProviderA(web(c).baseUrl, event);
          traffic.count(web(c), 'provider_a event');
          return res.status;
        });
      }),
    );
    return { posts, ms: Date.now() - t0 };
  };

  const cronCalls = (asOf: string) =>
    Promise.all(
      Array.from({ length: CRON_CALLS }, async (_, c) => {
        const res = await request(web(c).baseUrl, '/api/billing/cron/lifecycle?wait=true', {
          method: 'POST',
          headers: { 'x-cron-secret': CRON_SECRET },
          body: { asOf },
        });
        traffic.count(web(c), 'cron');
        return {
          status: res.status,
          jobId: res.body?.jobId as string,
          invoicesCreated: res.body?.invoicesCreated as number,
          errors: res.body?.errors as number,
        };
      }),
    );
  const sweepsDone = (asOf: string) =>
    lifecycleWorkers.map(
      (w) => workerLogs.find((l) => l.pid === w.pid)!.seen.sweeps.filter((s) => s.asOf === asOf).length,
    );
  const blockedBy = (pid: number) =>
    count('select count(*) as n from pg_stat_activity where ?::int = any(pg_blocking_pids(pid))', [pid]);

  /**
   * One run swept by both lifecycle workers at once. Both are frozen (SIGSTOP) while the cron calls open the run;
   * the first is let go and renews its first batch up to the invoice counter, which the test holds; then it is
   * frozen there, holding its batch, and the second is let go. Past the heartbeat the supervisor fails the job and
   * the second worker resumes the run, renewing what the first does not hold; the counter is released and the
   * first let go, so both sweeps of the run go on at once until each has finished.
   */
  const stalledRound = async (asOf: string) => {
    const [first, second] = lifecycleWorkers as [ServiceProcess, ServiceProcess];
    const lock = new pg.Client({ connectionString: database.url });
    await lock.connect();
    closers.push(() => lock.end().catch(() => {}));
    first.child.kill('SIGSTOP');
    second.child.kill('SIGSTOP');
    await lock.query('begin');
    await lock.query(
      `insert into document_counters (kind, year, last_seq) values ('INV', $1, 0) on conflict (kind, year) do ` +
        `update set last_seq = document_counters.last_seq`,
      [new Date(asOf).getUTCFullYear()],
    );
    const lockPid = Number((await lock.query('select pg_backend_pid() as pid')).rows[0].pid);
    const calls = cronCalls(asOf);
    first.child.kill('SIGCONT');
    await waitUntil(
      async () => (await blockedBy(lockPid)) > 0,
      60_000,
      'the first lifecycle worker to reach the invoice counter',
    );
    first.child.kill('SIGSTOP');
    second.child.kill('SIGCONT');
    const frozenAt = Date.now();
    let supervisedAt = 0;
    await waitUntil(
      async () => {
        if (Date.now() - supervisedAt > 1000) {
          supervisedAt = Date.now();
          // Bounded: a pass waits for pg-boss's maintenance lock, which a frozen worker might hold.
          await Promise.race([boss.supervise('lifecycle.sweep').catch(() => {}), sleep(5000)]);
        }
        const run = await db('lifecycle_runs')
          .where({ as_of: new Date(asOf) })
          .first();
        if (!run || run.attempts < 2) return false;
        // Resumed: the second sweep finished the run, or waits at the counter behind the first's batch.
        return run.status !== 'running' || (await blockedBy(lockPid)) >= 2;
      },
      90_000,
      'the second lifecycle worker to resume the stalled run',
    );
    const takeoverMs = Date.now() - frozenAt;
    await lock.query('rollback');
    first.child.kill('SIGCONT');
    const answered = await calls;
    await waitUntil(() => sweepsDone(asOf).every((n) => n >= 1), 60_000, 'both sweeps of the stalled run to finish');
    return { asOf, calls: answered, takeoverMs, sweepsPerWorker: sweepsDone(asOf) };
  };

  // Rounds of concurrent cron calls through both processes, each round a month on (catching every subscription up).
  const sweeps = async () => {
    const t0 = Date.now();
    const rounds = [];
    for (let r = 1; r <= SWEEP_ROUNDS; r++) {
      const asOf = monthsFrom(new Date(loadStarted), r, 1).toISOString();
      rounds.push({ asOf, calls: await cronCalls(asOf) });
    }
    const stalled = await stalledRound(monthsFrom(new Date(loadStarted), STALLED_MONTHS, 1).toISOString());
    rounds.push(stalled);
    return { rounds, stalled, ms: Date.now() - t0 };
  };

  // A burst from one address over both processes; redone from another address if it straddled a clock minute,
  // so it lies in one window whether windows are fixed per address or aligned to the clock.
  const rateLimit = async () => {
    for (let attempt = 0; ; attempt++) {
      const t0 = Date.now();
      const ip = `203.0.113.${10 + attempt}`;
      const answers: { port: number; status: number }[] = [];
      for (let i = 0; i < 4 * RATE_LIMIT; i += 4) {
        answers.push(
          ...(await Promise.all(
            [i, i + 1, i + 2, i + 3].map(async (j) => {
              const res = await request(web(j).baseUrl, '/api/licenses/verify', {
                body: { licenseKey: licenses[0].licenseKey },
                headers: { 'x-forwarded-for': ip },
              });
              traffic.count(web(j), 'verify (rate limit)');
              return { port: web(j).port, status: res.status };
            }),
          )),
        );
      }
      const t1 = Date.now();
      if (Math.floor(t0 / 60_000) === Math.floor(t1 / 60_000) || attempt >= 2) return { ip, answers, ms: t1 - t0 };
    }
  };

  const [validated, posted, swept, limited] = await Promise.all([
    validations(),
    providerEvents(),
    sweeps(),
    rateLimit(),
  ]);
  loadOn = false;
  await Promise.all(loadClients);
  const loadMs = Date.now() - loadStarted;

  // Background work settles: every provider event applied, then every delivery delivered or failed for good.
  const applyMs = await waitUntil(
    async () => (await count(`select count(*) as n from provider_events where status <> 'processed'`)) === 0,
    60_000,
    'every provider event applied',
  ).catch(() => -1);
  const settleMs = await waitUntil(
    async () => (await count(`select count(*) as n from webhook_deliveries where status = 'pending'`)) === 0,
    60_000,
    'every webhook delivery settled',
  ).catch(() => -1);

  return {
    db,
    count,
    webs,
    workers,
    workerLogs,
    traffic,
    eventsBeforeEndpoints,
    endpoints,
    licenses,
    payable,
    setupSubscriptions,
    lateSubscriptions,
    load,
    receiver,
    arrivals,
    validated,
    posted,
    swept,
    limited,
    applyMs,
    settleMs,
    durations: { startupMs, seedMs, setupMs, loadMs, totalMs: Date.now() - started },
  };
}

let scenario: ReturnType<typeof runScenario> | undefined;
const outcome = () => (scenario ??= runScenario());
const TIMEOUT = 420_000;

test.serial(
  'new devices at the limit over both web processes: exactly the limit activated per license, no over-activation',
  async (t) => {
    t.timeout(TIMEOUT);
    const o = await outcome();
    t.log(
      `durations: start 8 processes ${o.durations.startupMs} ms (seeding ${LATE_SUBSCRIPTIONS} subscriptions ` +
        `meanwhile ${o.durations.seedMs} ms), set-up ${o.durations.setupMs} ms, load ${o.durations.loadMs} ms, ` +
        `whole run ${o.durations.totalMs} ms`,
    );
    t.log(`requests per process:\n${o.traffic.describe(o.webs)}`);
    const { answers, ms } = o.validated;
    const admitted = answers.filter((a) => a.valid).length;
    const atLimit = answers.filter((a) => a.error === 'activation_limit_reached').length;
    t.log(
      `validations: ${answers.length} new devices over ${LICENSES} licenses of limit ${MAX_ACTIVATIONS} in ${ms} ` +
        `ms: ${admitted} activated, ${atLimit} activation_limit_reached`,
    );
    t.deepEqual(
      answers.filter((a) => a.status !== 200),
      [],
      'every validation answered 200',
    );
    t.is(admitted + atLimit, answers.length);
    for (const license of o.licenses) {
      t.is(
        answers.filter((a) => a.license === license.id && a.valid).length,
        MAX_ACTIVATIONS,
        'answers: the limit, admitted',
      );
      t.is(
        await o.count('select count(*) as n from license_activations where license_id = ?', [license.id]),
        MAX_ACTIVATIONS,
        'database: the limit, activated',
      );
    }
  },
);

test.serial(
  'the same provider_a event posted to both web processes at once: one payment per event, each invoice paid once',
  async (t) => {
    t.timeout(TIMEOUT);
    const o = await outcome();
    const payments = await o.count('select count(*) as n from payments');
    t.log(
      `provider events: ${PAID_INVOICES} events x ${2 * EVENT_COPIES} posts (${EVENT_COPIES} per process) in ` +
        `${o.posted.ms} ms, all applied ${o.applyMs} ms after the load; ${payments} payments`,
    );
    t.true(o.applyMs >= 0, 'every stored event applied');
    t.deepEqual([...new Set(o.posted.posts)], [200], 'every post acknowledged');
    t.is(await o.count(`select count(*) as n from provider_events`), PAID_INVOICES, 'each event stored once');
    t.is(payments, PAID_INVOICES, 'one payment per event, none twice');
    const ids = o.payable.map((i) => i.id);
    t.is(
      await o.count(`select count(*) as n from invoices where id = any(?) and status = 'paid'`, [ids]),
      PAID_INVOICES,
    );
    t.is(
      await o.count(
        `select count(*) as n from (select invoice_id from payments group by invoice_id having count(*) > 1) d`,
      ),
      0,
    );
    t.is(
      await o.count(`select count(*) as n from events where type = 'payment.succeeded'`),
      PAID_INVOICES,
      'one payment.succeeded each',
    );
    t.is(
      await o.count(`select count(*) as n from credit_ledger`),
      0,
      'no payment turned into store credit by a double apply',
    );
  },
);

test.serial(
  'concurrent cron sweeps through both web processes, one run swept by both lifecycle workers at once: exactly ' +
    'one invoice per subscription period',
  async (t) => {
    t.timeout(TIMEOUT);
    const o = await outcome();
    const runs = await o
      .db('lifecycle_runs')
      .orderBy('created_at')
      .select('id', 'status', 'as_of', 'attempts', 'summary');
    const lifecycle = o.workerLogs.filter((w) => w.name === 'worker-lifecycle');
    const sweeps = lifecycle.flatMap((w) => w.seen.sweeps);
    const { stalled } = o.swept;
    t.log(
      `sweeps: ${SWEEP_ROUNDS + 1} rounds x ${CRON_CALLS} concurrent cron calls in ${o.swept.ms} ms -> ` +
        `${runs.length} runs; sweeps finished per lifecycle worker: ` +
        `${lifecycle.map((w) => w.seen.sweeps.length).join(' + ')}, invoices they created: ` +
        `${lifecycle.map((w) => w.seen.sweeps.reduce((n, s) => n + s.invoicesCreated, 0)).join(' + ')}`,
    );
    const stalledInvoices = lifecycle.map((w) =>
      w.seen.sweeps
        .filter((s) => s.asOf === stalled.asOf)
        .map((s) => s.invoicesCreated)
        .join('+'),
    );
    t.log(
      `stalled run as of ${stalled.asOf}: taken over ${stalled.takeoverMs} ms after the first worker froze; ` +
        `swept by each worker ${stalled.sweepsPerWorker.join(' + ')} times, invoices ${stalledInvoices.join(' + ')}`,
    );
    for (const round of o.swept.rounds) {
      t.deepEqual(
        round.calls.filter((c) => c.status !== 200 || c.errors !== 0),
        [],
        `round as of ${round.asOf}: every call answered its sweep's summary`,
      );
    }
    t.deepEqual(
      runs.filter((r) => r.status !== 'succeeded'),
      [],
      'every run succeeded',
    );
    const stalledRun = runs.find((r) => r.as_of.toISOString() === stalled.asOf);
    t.true((stalledRun?.attempts ?? 0) >= 2, 'the stalled run was resumed by another attempt');
    t.true(
      stalled.sweepsPerWorker.every((n) => n >= 1),
      'each lifecycle worker swept the stalled run',
    );
    // Every subscription: one invoice for each period up to its current one, none twice.
    const periods = (
      await o.db.raw(`select s.id, s.period_number, count(i.id)::int as invoices, count(distinct i.period_start)::int
        as starts
    from subscriptions s left join invoices i on i.subscription_id = s.id group by s.id, s.period_number`)
    ).rows as { id: string; period_number: number; invoices: number; starts: number }[];
    const subscriptionInvoices = periods.reduce((sum, p) => sum + p.invoices, 0);
    const sweptInvoices = sweeps.reduce((sum, s) => sum + s.invoicesCreated, 0);
    t.log(
      `subscriptions: ${periods.length} (${SUBSCRIPTIONS} set up, ${o.lateSubscriptions.length} first due in the ` +
        `stalled round, ${o.load.subscriptions.length} by the load), ${subscriptionInvoices} invoices, ` +
        `${sweptInvoices} of them by sweeps`,
    );
    // The imported period 0 of the late subscriptions has no invoice; every other period has exactly one.
    const uninvoiced = (id: string) => (o.lateSubscriptions.includes(id) ? 1 : 0);
    t.deepEqual(
      periods.filter((p) => p.invoices !== p.period_number + 1 - uninvoiced(p.id) || p.starts !== p.invoices),
      [],
      'one invoice per period',
    );
    t.is(
      await o.count(
        'select count(*) as n from (select subscription_id, period_start from invoices where subscription_id is ' +
          'not null group by 1, 2 having count(*) > 1) d',
      ),
      0,
    );
    const periodOf = (ids: string[]) => [
      ...new Set(periods.filter((p) => ids.includes(p.id)).map((p) => p.period_number)),
    ];
    t.deepEqual(
      periodOf(o.setupSubscriptions),
      [STALLED_MONTHS],
      'the set-up subscriptions caught up to the last asOf',
    );
    t.deepEqual(periodOf(o.lateSubscriptions), [1], 'the late subscriptions renewed once, in the stalled round');
    t.is(
      subscriptionInvoices,
      periods.length - o.lateSubscriptions.length + sweptInvoices,
      'the first invoice at creation, every other by exactly one sweep',
    );
  },
);

test.serial(
  'mixed write load over both web processes: every accepted write present once, invoice numbers gapless and unique',
  async (t) => {
    t.timeout(TIMEOUT);
    const o = await outcome();
    const { load } = o;
    const invoices = await o.count('select count(*) as n from invoices');
    t.log(
      `mixed load: ${LOAD_CLIENTS} clients for ${o.durations.loadMs} ms: ${load.customers.length} customers, ` +
        `${load.invoices.length} invoices (${load.replays} replayed through the other process), ` +
        `${load.subscriptions.length} subscriptions; ${invoices} invoices in all`,
    );
    t.deepEqual(load.problems, [], 'every write accepted, every replay the stored answer');
    t.true(load.invoices.length >= LOAD_CLIENTS * MIN_LOAD_ITERATIONS);
    const loadCustomers = await o.db('customers').where('email', 'like', 'load-%').pluck('id');
    t.deepEqual(
      [...loadCustomers].sort(),
      [...load.customers].sort(),
      'the accepted customers, each once, nothing else',
    );
    const plainInvoices = await o.db('invoices').whereNull('subscription_id').pluck('id');
    t.deepEqual(
      [...plainInvoices].sort(),
      [...load.invoices, ...o.payable.map((i) => i.id)].sort(),
      'the accepted invoices, each once',
    );
    const subscriptions = await o.db('subscriptions').pluck('id');
    t.deepEqual(
      [...subscriptions].sort(),
      [...load.subscriptions, ...o.setupSubscriptions, ...o.lateSubscriptions].sort(),
      'the accepted subscriptions, each once',
    );
    t.is(await o.count('select count(distinct invoice_number) as n from invoices'), invoices, 'invoice numbers unique');
    t.deepEqual(await numberingProblems(o.db), [], 'invoice numbers gapless per year');
  },
);

test.serial('webhook deliveries by two workers: each event once per scheduled attempt, no double sends', async (t) => {
  t.timeout(TIMEOUT);
  const o = await outcome();
  const sendsPerWorker = o.workerLogs.filter((w) => w.name === 'worker-webhooks').map((w) => w.seen.attempts);
  const at = (path: string) => o.receiver.at(path);
  t.log(
    `deliveries: ${at('/ok').length} to the healthy endpoint, ${at('/flaky').length} to the one failing each first ` +
      `attempt, ${at('/down').length} to the one always failing; attempts logged per webhooks worker ` +
      `${sendsPerWorker.join(' + ')}; settled ${o.settleMs} ms after the provider events`,
  );
  t.true(o.settleMs >= 0, 'no delivery left pending');
  t.true(
    sendsPerWorker.every((n) => n > 0),
    'both webhooks workers sent',
  );
  const events = (await o.db('events').pluck('id')).filter((id) => !o.eventsBeforeEndpoints.has(id));
  const expect = async (endpoint: string, path: string, attempts: number, status: string, types: string[] | null) => {
    const deliveries = await o
      .db('webhook_deliveries')
      .where({ endpoint_id: endpoint })
      .select('event_id', 'status', 'attempt_count');
    const logged = await o.count(
      'select count(*) as n from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id ' +
        'where d.endpoint_id = ?',
      [endpoint],
    );
    const wanted = types
      ? (await o.db('events').whereIn('type', types).pluck('id')).filter((id) => !o.eventsBeforeEndpoints.has(id))
      : events;
    t.deepEqual(deliveries.map((d) => d.event_id).sort(), [...wanted].sort(), `${path}: one delivery per event`);
    t.deepEqual(
      deliveries.filter((d) => d.status !== status || d.attempt_count !== attempts),
      [],
      `${path}: every delivery ${status} after ${attempts} attempts`,
    );
    const perEvent = new Map<string, number>();
    for (const r of at(path))
      perEvent.set(String(r.headers['x-event-id']), (perEvent.get(String(r.headers['x-event-id'])) ?? 0) + 1);
    t.deepEqual(
      [...perEvent.entries()].filter(([, n]) => n !== attempts),
      [],
      `${path}: each event arrived ${attempts} times`,
    );
    t.is(perEvent.size, wanted.length, `${path}: every event arrived`);
    t.is(logged, at(path).length, `${path}: every arrival logged as an attempt, no unlogged send`);
  };
  await expect(o.endpoints.ok, '/ok', 1, 'delivered', null);
  await expect(o.endpoints.flaky, '/flaky', 2, 'delivered', ['payment.succeeded']);
  await expect(o.endpoints.down, '/down', RETRY_SCHEDULE.length + 1, 'failed', ['license.created']);
  // Retries follow the schedule: each attempt at least its delay (less 10% jitter) after the failure before it.
  const gaps = [...o.arrivals.entries()]
    .filter(([key]) => !key.startsWith('/ok '))
    .flatMap(([, times]) => times.slice(1).map((time, i) => time - times[i]!));
  t.log(`retry gaps: min ${Math.min(...gaps)} ms, max ${Math.max(...gaps)} ms over ${gaps.length} retries`);
  t.true(
    gaps.length > 0 && Math.min(...gaps) >= RETRY_SCHEDULE[0]! * 1000 * 0.85,
    `no retry before its time: ${Math.min(...gaps)} ms`,
  );
});

// Without the limit shared between processes (i20-shared), each web process admits RATE_LIMIT on its own.
test.serial(
  'public license rate limit across both web processes: at most the limit admitted from one address in its window',
  async (t) => {
    t.timeout(TIMEOUT);
    const o = await outcome();
    const { answers, ip, ms } = o.limited;
    const per = o.webs.map((w) => {
      const mine = answers.filter((a) => a.port === w.port);
      return (
        `:${w.port} ${mine.filter((a) => a.status !== 429).length} admitted / ` +
        `${mine.filter((a) => a.status === 429).length} refused`
      );
    });
    const admitted = answers.filter((a) => a.status !== 429).length;
    t.log(
      `rate limit ${RATE_LIMIT}/min from ${ip}: ${answers.length} requests in ${ms} ms alternating processes, ` +
        `${admitted} admitted, ${answers.length - admitted} refused (${per.join(', ')})`,
    );
    t.deepEqual(
      answers.filter((a) => a.status !== 200 && a.status !== 429),
      [],
      'admitted requests answered 200',
    );
    t.true(admitted >= 1, 'the limit admits');
    t.true(admitted <= RATE_LIMIT, `at most ${RATE_LIMIT} admitted over both processes, got ${admitted}`);
  },
);
