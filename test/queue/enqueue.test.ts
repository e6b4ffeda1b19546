import test from 'ava';
import { purgeExpiredJob } from '../../src/housekeeping/purge-expired.job.ts';
import { enqueue } from '../../src/queue/enqueue.ts';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

const jobCount = async () =>
  Number((await app.db.raw(`select count(*)::int as n from pgboss.job where name = ?`, [purgeExpiredJob.name])).rows[0].n);

test.serial('a rolled-back transaction enqueues nothing; a committed one enqueues', async (t) => {
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      await enqueue(trx, purgeExpiredJob, {});
      t.is(await jobCount(), 0, 'not visible outside the transaction before commit');
      throw new Error('roll back');
    }),
  );
  t.is(await jobCount(), 0);

  await app.db.transaction(async (trx) => {
    await enqueue(trx, purgeExpiredJob, {});
  });
  t.is(await jobCount(), 1);
});

test.serial('a registered worker runs the job against the database', async (t) => {
  const user = (await app.db('users').insert({ email: 'old@example.test', password_hash: null }).returning('id'))[0];
  await app.db('sessions').insert({ token_hash: 'a'.repeat(64), user_id: user.id, expires_at: new Date(Date.now() - 1000) });
  await app.db('sessions').insert({ token_hash: 'b'.repeat(64), user_id: user.id, expires_at: new Date(Date.now() + 3600_000) });
  await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
  const id = await app.db.transaction((trx) => enqueue(trx, purgeExpiredJob, {}));
  const deadline = Date.now() + 15_000;
  let state = '';
  while (Date.now() < deadline) {
    state = (await app.db.raw('select state from pgboss.job where id = ?', [id])).rows[0]?.state;
    if (state === 'completed') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(state, 'completed');
  t.deepEqual((await app.db('sessions').select('token_hash')).map((r) => r.token_hash), ['b'.repeat(64)]);
});

test('a payload that breaks the job schema is refused before it is sent', async (t) => {
  await t.throwsAsync(app.db.transaction((trx) => enqueue(trx, purgeExpiredJob, { asOf: 'yesterday' } as never)));
});
