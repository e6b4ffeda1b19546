import { randomUUID } from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { APPLY_PROVIDER_EVENT_RETRY_LIMIT } from '../../src/provider-events/apply-event.job.ts';
import { storeProviderEvent } from '../../src/provider-events/service.ts';
import { renderInvoicePdfJob } from '../../src/invoices/pdf/render-pdf.job.ts';
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
  Number(
    (await app.db.raw(`select count(*)::int as n from pgboss.job where name = ?`, [purgeExpiredJob.name])).rows[0].n,
  );

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
  await app
    .db('sessions')
    .insert({ token_hash: 'a'.repeat(64), user_id: user.id, expires_at: new Date(Date.now() - 1000) });
  await app
    .db('sessions')
    .insert({ token_hash: 'b'.repeat(64), user_id: user.id, expires_at: new Date(Date.now() + 3600_000) });
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
  t.deepEqual(
    (await app.db('sessions').select('token_hash')).map((r) => r.token_hash),
    ['b'.repeat(64)],
  );
});

test('a payload that breaks the job schema is refused before it is sent', async (t) => {
  await t.throwsAsync(app.db.transaction((trx) => enqueue(trx, purgeExpiredJob, { asOf: 'yesterday' } as never)));
});

// A received provider event and its job, in one transaction (the provider webhook acknowledgement).
const received = (eventId: string, id = randomUUID()) =>
  ({
    id,
    provider: 'provider_a',
    event_id: eventId,
    event_type: 'charge.updated',
    payload: { id: eventId },
    occurred_at: null,
    subject_id: null,
  }) as const;
const jobsOf = async (eventId: string) =>
  (
    await app.db.raw(
      `select j.data, j.retry_limit, j.retry_delay, j.retry_backoff, j.expire_seconds, j.state from pgboss.job j
                      join provider_events e on j.data->>'eventId' = cast(e.id as text) where e.event_id = ?`,
      [eventId],
    )
  ).rows;

/** Listens on pg-boss's notify channel while `work` runs; answers the queue names heard. */
async function notificationsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const listener = new pg.Client({ connectionString: app.database.url });
  await listener.connect();
  try {
    const channel = (
      await listener.query(`select ('pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24)) as c`)
    ).rows[0].c as string;
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(String(n.payload)));
    await listener.query(`listen ${pg.escapeIdentifier(channel)}`);
    await work();
    // A notification arrives after the commit; a marker sent last bounds the wait.
    await app.db.raw('select pg_notify(?, ?)', [channel, 'marker']);
    const deadline = Date.now() + 5000;
    while (!heard.includes('marker') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return heard.filter((name) => name !== 'marker');
  } finally {
    await listener.end();
  }
}

test.serial(
  'a stored provider event has one job with the queue options send gives, and a duplicate adds neither',
  async (t) => {
    const id = randomUUID();
    const heard = await notificationsDuring(async () =>
      t.true(await storeProviderEvent(app.db, received('evt_gated_1', id))),
    );
    t.truthy((await app.db('provider_events').where({ id }).first())?.id);
    const [job, ...more] = await jobsOf('evt_gated_1');
    t.is(more.length, 0);
    // What `send` would have written for this queue (apply-event.job.ts).
    t.like(job, {
      data: { eventId: id },
      retry_limit: APPLY_PROVIDER_EVENT_RETRY_LIMIT,
      retry_delay: 2,
      retry_backoff: true,
      expire_seconds: 120,
      state: 'created',
    });
    // Its queue is polled (apply-event.job.ts says why), so the acknowledgement sends no NOTIFY.
    t.deepEqual(heard, []);

    const again = randomUUID();
    t.false(await storeProviderEvent(app.db, received('evt_gated_1', again)));
    t.is((await jobsOf('evt_gated_1')).length, 1, 'a duplicate queues nothing');
  },
);

test.serial('a job of a queue that asks for a notify wakes its workers at commit, not before', async (t) => {
  const heard = await notificationsDuring(() =>
    app.db.transaction(async (trx) => {
      await enqueue(trx, renderInvoicePdfJob, { invoiceId: randomUUID(), contentVersion: 1 });
    }),
  );
  t.deepEqual(heard, [renderInvoicePdfJob.name]);
  const rolledBack = await notificationsDuring(() =>
    app.db
      .transaction(async (trx) => {
        await enqueue(trx, renderInvoicePdfJob, { invoiceId: randomUUID(), contentVersion: 1 });
        throw new Error('roll back');
      })
      .catch(() => {}),
  );
  t.deepEqual(rolledBack, []);
});

test.serial('a provider event stored in a rolled-back transaction leaves neither the row nor the job', async (t) => {
  const id = randomUUID();
  await t.throwsAsync(
    app.db.transaction(async (trx) => {
      t.true(await storeProviderEvent(trx, received('evt_gated_2', id)));
      throw new Error('roll back');
    }),
  );
  t.is(
    Number(
      (await app.db.raw(`select count(*)::int as n from provider_events where event_id = 'evt_gated_2'`)).rows[0].n,
    ),
    0,
  );
  t.is(
    Number((await app.db.raw(`select count(*)::int as n from pgboss.job where data->>'eventId' = ?`, [id])).rows[0].n),
    0,
  );
});
