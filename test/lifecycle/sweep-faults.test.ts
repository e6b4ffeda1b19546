/**
 * Issue 33 item 3: a renewal sweep whose database fails under it never leaves a promise without a handler (Node 22
 * exits on one) and never goes on committing after its step was reported failed. The faults are real ones, induced
 * in this file's own database by triggers.
 */
import test from 'ava';
import { heartbeatRunRow } from '../../src/lifecycle/repo.ts';
import { runLifecycleSweep } from '../../src/lifecycle/sweep.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { countRows } from './fixtures.ts';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

let app: TestApp;
test.before(async () => {
  process.on('unhandledRejection', onUnhandled);
  app = await startTestApp();
});
test.after.always(async () => {
  process.off('unhandledRejection', onUnhandled);
  await app?.close();
});

const AS_OF = new Date('2025-07-01T00:00:00.000Z');

/** `count` monthly subscriptions whose period ended in June 2025: each is due once by AS_OF. */
async function dueSubscriptions(count: number): Promise<string[]> {
  const customer = await insertCustomer(app.db);
  const plan = await makePlan(app.db, '5.00');
  const rows = Array.from({ length: count }, (_, n) => {
    const start = new Date(Date.UTC(2025, 4, 1 + (n % 28), 9));
    return {
      customer_id: customer.id,
      plan_id: plan.id,
      status: 'active',
      billing_cycle: 'monthly',
      billing_anchor: start,
      period_number: 0,
      current_period_start: start,
      current_period_end: new Date(Date.UTC(2025, 5, 1 + (n % 28), 9)),
    };
  });
  return (await app.db('subscriptions').insert(rows).returning('id')).map((r: { id: string }) => r.id);
}

const stillDue = (ids: string[]) =>
  countRows(app.db, 'subscriptions', (q) => q.whereIn('id', ids).where('current_period_end', '<=', AS_OF));

test.serial(
  'an invoice insert that fails for one subscription: its batch is retried one by one, that subscription is the ' +
    'one error, the others renew, and nothing is left unhandled',
  async (t) => {
    const ids = await dueSubscriptions(30);
    const broken = ids[17]!;
    await app.db.raw(`
      create function fail_one_invoice() returns trigger language plpgsql as $$
      begin
        if new.subscription_id = '${broken}' then raise exception 'induced fault: invoice of %', new.subscription_id;
        end if;
        return new;
      end $$`);
    await app.db.raw(
      'create trigger fail_one_invoice before insert on invoices for each row execute function fail_one_invoice()',
    );
    try {
      const summary = await runLifecycleSweep(app.deps, AS_OF, { batchSize: 4, concurrency: 3 });
      t.deepEqual(summary.failedSteps, []);
      t.is(summary.errors, 1);
      t.is(summary.invoicesCreated, ids.length - 1);
      t.is(await countRows(app.db, 'invoices', (q) => q.where({ subscription_id: broken })), 0);
      t.is(await stillDue(ids), 1, 'only the broken subscription is still due');
      t.deepEqual(unhandled, []);
    } finally {
      await app.db.raw('drop trigger fail_one_invoice on invoices; drop function fail_one_invoice()');
    }
  },
);

test.serial(
  'a batch whose heartbeat write fails: the renewals step is reported failed, the process lives, and the other ' +
    'loops stop taking new batches (nothing commits after the failure is reported)',
  async (t) => {
    await app.db('subscriptions').where('current_period_end', '<=', AS_OF).delete();
    const ids = await dueSubscriptions(120);
    const [run] = await app
      .db('lifecycle_runs')
      .insert({ status: 'running', as_of: AS_OF, started_at: app.db.fn.now(), heartbeat_at: app.db.fn.now() })
      .returning('id');
    // The third heartbeat (the third batch committed) fails, once.
    await app.db.raw(`
      create sequence heartbeat_fault;
      create function fail_third_heartbeat() returns trigger language plpgsql as $$
      begin
        if nextval('heartbeat_fault') = 3 then raise exception 'induced fault: heartbeat'; end if;
        return new;
      end $$;
      create trigger fail_third_heartbeat before update on lifecycle_runs for each row
        when (old.status = 'running' and new.status = 'running') execute function fail_third_heartbeat()`);
    try {
      const batchSize = 2;
      const concurrency = 3;
      const summary = await runLifecycleSweep(app.deps, AS_OF, {
        batchSize,
        concurrency,
        heartbeat: () => heartbeatRunRow(app.db, run.id),
      });
      const invoicesWhenReported = await countRows(app.db, 'invoices', (q) => q.whereIn('subscription_id', ids));
      t.deepEqual(summary.failedSteps, ['renewals']);
      t.true(summary.errors >= 1);
      await new Promise((r) => setTimeout(r, 1500));
      t.is(
        await countRows(app.db, 'invoices', (q) => q.whereIn('subscription_id', ids)),
        invoicesWhenReported,
        'no batch committed after the step was reported failed',
      );
      // Three batches before the fault, at most one more per other loop already in flight.
      t.true(invoicesWhenReported <= (3 + concurrency) * batchSize, `${invoicesWhenReported} invoices`);
      t.is(await stillDue(ids), ids.length - invoicesWhenReported, 'the rest is left due for the next sweep');
      t.deepEqual(unhandled, []);
    } finally {
      await app.db.raw(`drop trigger fail_third_heartbeat on lifecycle_runs; drop function fail_third_heartbeat();
        drop sequence heartbeat_fault`);
    }
  },
);
