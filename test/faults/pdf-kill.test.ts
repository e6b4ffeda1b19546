/**
 * A pdf worker SIGKILLed while it renders a backlog of invoices: its Chromium goes with it (nothing of it keeps
 * running or stays in the temp folder once the next worker starts), and a new worker renders every invoice,
 * one stored PDF per invoice version.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import test from 'ava';
import { requestInvoicePdfRender } from '../../src/invoices/pdf/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { adminCtx, makeInvoice, type Ctx } from '../payments/fixtures.ts';
import { isRunning, killAll, processTree, sleep, startWorker, waitUntil } from './processes.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => {
  await killAll();
  await app?.close();
});

const QUEUE = 'invoices.render-pdf';
const count = async (sql: string) => Number((await app.db.raw(sql)).rows[0].n);
const profileDirsOf = (pid: number) =>
  readdirSync(tmpdir()).filter((entry) => entry.startsWith('billing-pdf-chromium-') && entry.includes(`-${pid}-`));

test(
  'pdf worker SIGKILLed mid-render: ' + 'its Chromium exits with it, and a new worker renders every invoice once',
  async (t) => {
    t.timeout(150_000);
    const TOTAL = 80;
    // A killed worker's jobs stay active until they expire (60 s in production, copied into each job when queued).
    await app.boss.updateQueue(QUEUE, { expireInSeconds: 4 });
    const invoices = [];
    for (let i = 0; i < TOTAL; i += 20)
      invoices.push(...(await Promise.all(Array.from({ length: 20 }, () => makeInvoice(c)))));
    const versions: Array<{ id: string; content_version: number }> = await app
      .db('invoices')
      .select('id', 'content_version');
    t.is(versions.length, TOTAL);
    for (const invoice of versions) await requestInvoicePdfRender(app.db, invoice.id, invoice.content_version);

    const stored = () => count('select count(*) as n from invoice_pdfs');
    const first = await startWorker('pdf', app.database.url);
    await waitUntil(async () => (await stored()) >= 5, 60_000, 'the first PDFs stored');
    const descendants = processTree(first.pid).filter((pid) => pid !== first.pid);
    const chromium = descendants.filter((pid) => /chrom|headless/i.test(commandOf(pid)));
    const activeAtKill = await count(
      `select count(*) as n from pgboss.job where name = '${QUEUE}' and state = 'active'`,
    );
    await first.kill();
    const atKill = await stored();
    t.log(
      `killed with ${atKill} of ${TOTAL} PDFs stored, ${activeAtKill} jobs active, ${chromium.length} Chromium ` +
        `processes under the worker`,
    );
    t.true(atKill < TOTAL, 'killed part-way');
    t.true(chromium.length > 0, 'the worker had a Chromium running');

    const goneAfter = await waitUntil(
      () => descendants.every((pid) => !isRunning(pid)),
      10_000,
      'the killed worker’s Chromium to exit',
    ).catch(() => -1);
    t.true(
      goneAfter >= 0,
      `still running: ${descendants
        .filter(isRunning)
        .map((pid) => `${pid} ${commandOf(pid)}`)
        .join('\n')}`,
    );
    t.log(`every process under the killed worker gone ${goneAfter} ms after the kill`);
    t.true(profileDirsOf(first.pid).length > 0, 'SIGKILL left the profile folder (no exit handler ran)');

    await sleep(5000);
    // Any pg-boss instance's supervisor fails expired jobs back to retry (the workers run it periodically).
    await app.boss.supervise(QUEUE);
    const second = await startWorker('pdf', app.database.url);
    // A job killed after its PDF was stored is retried too (the retry finds the PDF and completes): wait for both.
    const pending = () =>
      count(`select count(*) as n from pgboss.job where name = '${QUEUE}' and state <> 'completed'`);
    const waited = await waitUntil(
      async () => (await stored()) === TOTAL && (await pending()) === 0,
      90_000,
      'every invoice rendered',
    ).catch(() => -1);
    t.true(
      waited >= 0,
      `${await stored()} of ${TOTAL} stored, ${await pending()} jobs not completed; ${second.output().slice(-2000)}`,
    );
    t.log(`the new worker finished the backlog ${waited} ms after it started`);

    t.is(
      await count(`select count(*) as n from (select distinct invoice_id, content_version from invoice_pdfs) d`),
      TOTAL,
      'one PDF per invoice version',
    );
    t.is(
      await count(
        `select count(*) as n from invoices i where not exists (select 1 from invoice_pdfs p where p.invoice_id = ` +
          `i.id and p.content_version = i.content_version)`,
      ),
      0,
    );
    t.is(
      await count(`select count(*) as n from pgboss.job where name = '${QUEUE}'`),
      TOTAL,
      'one job per invoice version, none sent twice',
    );
    t.deepEqual(profileDirsOf(first.pid), [], 'the new worker removed the killed one’s profile folder');
    t.is(await second.stop(), 0);
    t.false(existsSync(`/proc/${second.pid}`) && isRunning(second.pid));
  },
);

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200);
  } catch {
    return '';
  }
}
