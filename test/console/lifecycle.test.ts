/** `/admin/lifecycle` (console.md "operations"): the sweep's runs newest first, "run now", and its audit row. */
import test from 'ava';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { scrollsSideways } from '../helpers/browser.ts';
import { auditMark, expectOneAudit } from '../audit/fixtures.ts';
import { rowsOf, startConsoleKit, submit, texts, type ConsoleKit } from './fixtures.ts';

let kit: ConsoleKit;
test.before(async () => {
  kit = await startConsoleKit();
});
test.after.always(async () => kit?.close());

test.serial('with no run yet the page says so, with one h1, the run form, and reads at 360 px', async (t) => {
  const { page, close } = await kit.adminPage('/admin/lifecycle', 360);
  t.is(await page.title(), 'Lifecycle sweep · Billing console');
  t.deepEqual(await texts(page, 'h1'), ['Lifecycle sweep']);
  t.deepEqual(await texts(page, '.empty'), ['No sweep has run yet.']);
  t.is(await page.$eval('nav a[aria-current=page]', (a) => a.textContent), 'Settings');
  t.truthy(await page.$('form[method=post][action="/admin/lifecycle/run"] input[name=_csrf]'));
  t.false(await scrollsSideways(page));
  await close();
});

test.serial(
  "run now queues the cron endpoint's sweep, a worker runs it, the page shows it with its summary; one audit row by " +
    'the admin',
  async (t) => {
    const db = kit.app.db;
    const mark = await auditMark(db);
    const { page, close } = await kit.adminPage('/admin/lifecycle');
    await submit(page, '/admin/lifecycle/run', {});
    t.regex((await texts(page, '.notice'))[0]!, /^Lifecycle run [0-9a-f-]{36} is queued; reload to see its summary\.$/);
    const run = await db('lifecycle_runs').first();
    t.like(run, { status: 'queued' });
    await expectOneAudit(t, db, mark, {
      action: 'lifecycle.run',
      target_type: 'lifecycle_run',
      target_id: run.id,
      actor_email: kit.admin.email,
    });

    // A real lifecycle worker in this process runs the queued job.
    await registerWorkers(kit.app.boss, kit.app.deps, ['lifecycle'], jobHandlers);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await db('lifecycle_runs').where({ id: run.id }).first()).status !== 'succeeded')
      await new Promise((r) => setTimeout(r, 200));
    await page.reload();
    t.deepEqual(await texts(page, 'thead th'), [
      'Requested',
      'Status',
      'As of',
      'Started',
      'Finished',
      'Summary',
      'Error',
    ]);
    const [row] = await rowsOf(page, '');
    t.is(row![1], 'succeeded');
    t.regex(row![3]!, /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    t.regex(row![5]!, /^nothing was due\d+ ms$/);
    t.is(row![6], '');
    await close();
  },
);

test.serial("runs are newest first, 50 a page, with a failed run's error and a summary's counts", async (t) => {
  const db = kit.app.db;
  const base = Date.parse('2024-01-01T00:00:00Z');
  await db('lifecycle_runs').insert(
    Array.from({ length: 55 }, (_, i) => ({
      status: 'succeeded',
      as_of: new Date(base + i * 60_000),
      created_at: new Date(base + i * 60_000),
      finished_at: new Date(base + i * 60_000),
      summary: JSON.stringify({
        asOf: new Date(base).toISOString(),
        invoicesCreated: i,
        trialsEnded: 0,
        failedSteps: [],
        durationsMs: { renewals: 5 },
      }),
    })),
  );
  await db('lifecycle_runs').insert({
    status: 'failed',
    error: 'abandoned: no heartbeat',
    created_at: new Date(base + 56 * 60_000),
    finished_at: new Date(base + 56 * 60_000),
  });
  const { page, close } = await kit.adminPage('/admin/lifecycle');
  const rows = await rowsOf(page, '');
  t.is(rows.length, 50);
  t.is(rows[0]![1], 'succeeded', 'the run of the previous test is the newest');
  t.deepEqual([rows[1]![1], rows[1]![5], rows[1]![6]], ['failed', 'none', 'abandoned: no heartbeat']);
  t.is(rows[2]![5], 'invoicesCreated 545 ms');
  await Promise.all([page.waitForNavigation(), page.click('a[rel=next]')]);
  const second = await rowsOf(page, '');
  // The rest: 6 down to 0 (the counts and the duration are separate items of one cell).
  t.deepEqual(
    second.map((r) => r[5]),
    [...[6, 5, 4, 3, 2, 1].map((n) => `invoicesCreated ${n}5 ms`), 'nothing was due5 ms'],
  );
  t.is(await page.$('a[rel=next]'), null);
  await close();
});
