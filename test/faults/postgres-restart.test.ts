/**
 * PostgreSQL stopped and started again under load, on a server of this test's own (an embedded PostgreSQL in a
 * temporary folder, so the shared test server is not disturbed): the running web process's /readyz answers 503
 * while the server is down and 200 after, requests succeed again, and a pg-boss worker runs jobs again, all
 * without restarting either process.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.ts';
import { createKnex } from '../../src/db/knex.ts';
import { purgeExpiredJob } from '../../src/housekeeping/purge-expired.job.ts';
import { createLogger } from '../../src/logger.ts';
import { enqueue } from '../../src/queue/enqueue.ts';
import { createBoss, setBoss } from '../../src/queue/boss.ts';
import { request } from '../helpers/http.ts';
import { databaseUrl, prepareTemplate } from '../helpers/template.ts';
import { adminCookie } from './clients.ts';
import { freePort } from '../helpers/net.ts';
import { killAll, sleep, startWeb, startWorker, statusOf, waitUntil } from './processes.ts';

/** The web process's unhandled-error lines: what a 500 while down was (the rest of its output is the pool's noise). */
const unhandled = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.includes('unhandled error'))
    .join('\n')
    .slice(0, 3000);

let tempDir: string;
let server: EmbeddedServer | undefined;
let port: number;
const dataDir = () => path.join(tempDir, 'data');

test.before(async () => {
  tempDir = mkdtempSync(path.join(os.tmpdir(), 'billing-faults-pg-'));
  // As root the server runs as the unprivileged postgres user: it must reach the folder.
  chmodSync(tempDir, 0o755);
  port = await freePort();
  server = await startEmbeddedPostgres({ dataDir: dataDir(), port, ephemeral: true });
});
test.after.always(async () => {
  await killAll();
  await server?.stop();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

test(
  'PostgreSQL restarted under load: /readyz 503 then 200, requests and a pg-boss worker recover without a process ' +
    'restart',
  async (t) => {
    t.timeout(150_000);
    await prepareTemplate(server!.adminUrl, 'billing_faults');
    const url = databaseUrl(server!.adminUrl, 'billing_faults');
    const knex = createKnex(url, 2);
    t.teardown(() => knex.destroy());

    const web = await startWeb(url, { env: { LOG_LEVEL: 'warn' } });
    const worker = await startWorker('lifecycle', url);
    const cookie = await adminCookie(web.baseUrl, knex);

    // Load: reads and writes from 4 clients the whole time; each answer's status is counted, per phase.
    let phase: 'before' | 'down' | 'after' = 'before';
    const statuses: Record<string, Record<string, number>> = { before: {}, down: {}, after: {} };
    const slowest: Record<string, number> = { before: 0, down: 0, after: 0 };
    let loadOn = true;
    const client = async (n: number) => {
      for (let i = 0; loadOn; i++) {
        const at = phase;
        const started = Date.now();
        let status: number | string;
        try {
          const response =
            i % 2 === 0
              ? await request(web.baseUrl, '/api/customers', {
                  cookie,
                  body: { name: `Restart ${n}.${i}`, email: `restart-${n}-${i}@example.test` },
                })
              : await request(web.baseUrl, '/api/customers?limit=5', { cookie });
          status = response.status;
        } catch {
          status = 'connection error';
        }
        // A request that spans a change of phase counts as one made while down.
        const bucket = at === phase ? at : 'down';
        statuses[bucket]![status] = (statuses[bucket]![status] ?? 0) + 1;
        slowest[bucket] = Math.max(slowest[bucket]!, Date.now() - started);
        await sleep(20);
      }
    };
    const clients = Array.from({ length: 4 }, (_, n) => client(n));
    await sleep(1500);
    t.is(await statusOf(`${web.baseUrl}/readyz`), 200);

    phase = 'down';
    await server!.stop();
    const to503 = await waitUntil(async () => (await statusOf(`${web.baseUrl}/readyz`)) === 503, 15_000, '/readyz 503');
    t.log(`PostgreSQL stopped: /readyz 503 after ${to503} ms`);
    await sleep(3000);
    t.is(await statusOf(`${web.baseUrl}/readyz`), 503, 'still 503 while down');
    t.is(await statusOf(`${web.baseUrl}/healthz`), 200, 'alive all the same');

    server = await startEmbeddedPostgres({ dataDir: dataDir(), port, ephemeral: true });
    const to200 = await waitUntil(async () => (await statusOf(`${web.baseUrl}/readyz`)) === 200, 30_000, '/readyz 200');
    phase = 'after';
    t.log(`PostgreSQL started again: /readyz 200 after ${to200} ms`);
    await sleep(3000);
    loadOn = false;
    await Promise.all(clients);
    t.log(`answers by phase: ${JSON.stringify(statuses)}; slowest ms: ${JSON.stringify(slowest)}`);

    t.true(web.alive() && worker.alive(), 'neither process exited');
    t.deepEqual(Object.keys(statuses.before!).sort(), ['200', '201'], 'all succeeded before the stop');
    t.deepEqual(Object.keys(statuses.after!).sort(), ['200', '201'], 'all succeed again after, on the same process');
    t.true(
      Object.keys(statuses.down!).every((s) => ['200', '201', '503'].includes(s)),
      `while down: answers, not hangs or resets: ${JSON.stringify(statuses.down)}\n${unhandled(web.output())}`,
    );
    t.true(slowest.down! < 15_000, 'answers while down come within the pool timeout');

    // The worker, never restarted, runs a job queued after the restart.
    const boss = createBoss(url, createLogger({ LOG_LEVEL: 'silent' }), { migrate: false, supervise: false, max: 2 });
    await boss.start();
    setBoss(boss);
    t.teardown(() => boss.stop({ graceful: false }));
    const id = await knex.transaction((trx) => enqueue(trx, purgeExpiredJob, {}));
    let state = '';
    const ran = await waitUntil(
      async () => {
        state = (await knex.raw('select state from pgboss.job where id = ?', [id])).rows[0]?.state;
        return state === 'completed';
      },
      30_000,
      'the job to complete',
    ).catch(() => -1);
    t.is(state, 'completed', worker.output().slice(-3000));
    t.log(`a job queued after the restart completed after ${ran} ms`);
    // The web's queue client enqueues again too: an issued invoice queues its PDF render through it.
    const customer = await request(web.baseUrl, '/api/customers', {
      cookie,
      body: { name: 'After', email: 'after-restart@example.test' },
    });
    const invoice = await request(web.baseUrl, '/api/billing/invoices', {
      cookie,
      body: {
        customerId: customer.body.id,
        status: 'issued',
        lineItems: [{ description: 'x', quantity: 1, unitPrice: '5.00' }],
      },
    });
    t.is(invoice.status, 201, invoice.text);
    const pdf = await request(web.baseUrl, `/api/billing/invoices/${invoice.body.id}/pdf`, { cookie });
    t.true(
      pdf.status === 202 || pdf.status === 200,
      `pdf request queued through the web's pg-boss: ${pdf.status} ${pdf.text.slice(0, 200)}`,
    );
    const queued = await knex.raw(`select count(*)::int as n from pgboss.job where name = 'invoices.render-pdf'`);
    t.true(queued.rows[0].n >= 1, 'render job queued after the restart');

    t.is(await worker.stop(), 0, 'the worker still stops cleanly');
    t.is(await web.stop(), 0, 'the web process still stops cleanly');
  },
);
