/**
 * Issue 20: a sweep runs several renewal batches at once (D-82 still holds). Batches claim their rows one
 * at a time and issue their invoices in claim order, so numbers follow the renewal order (oldest period end
 * first) exactly as with one batch at a time, and every period, event and audit row exists once.
 */
import test from 'ava';
import { renewDueSubscriptions } from '../../src/subscriptions/renew-due.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makePlan } from '../subscriptions/fixtures.ts';
import { countRows, numberingProblems } from './fixtures.ts';

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

const COUNT = 240;
const AS_OF = new Date('2025-06-20T00:00:00.000Z');

test.serial(
  'batches in flight at once: numbers in renewal order, each period invoiced once, one event, delivery and audit ' +
    'row each',
  async (t) => {
    const [customer] = await db.knex('customers').insert({ name: 'C', email: 'c@concurrent.test' }).returning('id');
    const plan = await makePlan(db.knex, '9.00');
    await db.knex('webhook_endpoints').insert({
      url: 'https://receiver.invalid/hook',
      events: ['invoice.created'],
      secret: 'whsec_concurrent_test_0123456789',
    });
    // Period ends spread over May and June in an order unlike the ids', so the renewal order is visible.
    const rows = Array.from({ length: COUNT }, (_, n) => {
      const day = 1 + ((n * 7) % 19);
      const anchor = new Date(Date.UTC(2025, 4, day, 9));
      return {
        customer_id: customer.id,
        plan_id: plan.id,
        status: 'active',
        billing_cycle: 'monthly',
        billing_anchor: anchor,
        period_number: 0,
        current_period_start: anchor,
        current_period_end: new Date(Date.UTC(2025, 5, day, 9)),
      };
    });
    await db.knex('subscriptions').insert(rows);
    const order: { id: string }[] = await db
      .knex('subscriptions')
      .orderBy([{ column: 'current_period_end' }, { column: 'id' }])
      .select('id');

    const result = await renewDueSubscriptions(db.knex, AS_OF, { batchSize: 7, concurrency: 4 });
    t.is(result.errors, 0);
    t.is(result.invoicesCreated, COUNT);
    t.true(result.batches >= COUNT / 7);

    const invoices: { subscription_id: string; invoice_number: string }[] = await db
      .knex('invoices')
      .select('subscription_id', 'invoice_number');
    t.is(invoices.length, COUNT);
    t.deepEqual(await numberingProblems(db.knex), []);
    const seq = new Map(invoices.map((i) => [i.subscription_id, Number(i.invoice_number.split('-')[2])]));
    t.deepEqual(
      order.map((s) => seq.get(s.id)),
      order.map((_, i) => i + 1),
      'invoice n belongs to the n-th subscription due',
    );
    t.is(await countRows(db.knex, 'events', (q) => q.where({ type: 'invoice.created' })), COUNT);
    t.is(await countRows(db.knex, 'webhook_deliveries'), COUNT);
    const audits: { target_id: string; after: { invoiceIds: string[] } }[] = await db
      .knex('audit_log')
      .where({ action: 'subscription.renew', actor: 'system' })
      .select('target_id', 'after');
    t.is(audits.length, COUNT);
    const invoiceOf = new Map(
      (await db.knex('invoices').select('id', 'subscription_id')).map((i: { id: string; subscription_id: string }) => [
        i.subscription_id,
        i.id,
      ]),
    );
    t.true(
      audits.every((a) => a.after.invoiceIds.length === 1 && a.after.invoiceIds[0] === invoiceOf.get(a.target_id)),
      'each audit row names its invoice',
    );

    const again = await renewDueSubscriptions(db.knex, AS_OF, { batchSize: 7, concurrency: 4 });
    t.is(again.invoicesCreated, 0);
  },
);

test.serial(
  'a paused subscription whose cancellation is scheduled is canceled by the sweep at its period end, without an ' +
    'invoice; a paused one without the flag stays paused',
  async (t) => {
    const [customer] = await db
      .knex('customers')
      .insert({ name: 'Paused', email: 'paused@concurrent.test' })
      .returning('id');
    const plan = await makePlan(db.knex, '9.00');
    // Due after the test above's sweep, before its subscriptions' next periods end (July).
    const anchor = new Date('2025-05-25T09:00:00.000Z');
    const periodEnd = new Date('2025-06-25T09:00:00.000Z');
    const base = {
      customer_id: customer.id,
      plan_id: plan.id,
      status: 'paused',
      paused_at: new Date('2025-06-01T00:00:00.000Z'),
      billing_cycle: 'monthly',
      billing_anchor: anchor,
      period_number: 0,
      current_period_start: anchor,
      current_period_end: periodEnd,
    };
    const [scheduled, kept] = await db
      .knex('subscriptions')
      .insert([
        { ...base, cancel_at_period_end: true },
        { ...base, cancel_at_period_end: false },
      ])
      .returning('id');
    const invoicesBefore = await countRows(db.knex, 'invoices');

    const result = await renewDueSubscriptions(db.knex, new Date('2025-06-28T00:00:00.000Z'));
    t.is(result.errors, 0);
    t.is(result.canceled, 1);
    const done = await db.knex('subscriptions').where({ id: scheduled.id }).first();
    t.like(done, { status: 'canceled', cancel_at_period_end: false });
    t.deepEqual(done.canceled_at, periodEnd);
    t.is((await db.knex('subscriptions').where({ id: kept.id }).first()).status, 'paused');
    t.is(await countRows(db.knex, 'invoices'), invoicesBefore);
    t.is(
      await countRows(db.knex, 'events', (q) =>
        q.where({ type: 'subscription.canceled' }).whereRaw("data->>'id' = ?", [scheduled.id]),
      ),
      1,
    );
    t.is(
      await countRows(db.knex, 'audit_log', (q) =>
        q.where({ action: 'subscription.cancel', actor: 'system', target_id: scheduled.id }),
      ),
      1,
    );
  },
);

test.serial(
  'a subscription another transaction holds while the claims pass it is renewed by the same sweep once released',
  async (t) => {
    const [customer] = await db
      .knex('customers')
      .insert({ name: 'Held', email: 'held@concurrent.test' })
      .returning('id');
    const plan = await makePlan(db.knex, '9.00');
    // Due after the tests above, before their subscriptions' next periods end.
    const ends = Array.from({ length: 20 }, (_, n) => new Date(Date.UTC(2025, 5, 26, 9, n)));
    const ids: string[] = (
      await db
        .knex('subscriptions')
        .insert(
          ends.map((end) => ({
            customer_id: customer.id,
            plan_id: plan.id,
            status: 'active',
            billing_cycle: 'monthly',
            billing_anchor: new Date(end.getTime() - 30 * 86_400_000),
            period_number: 0,
            current_period_start: new Date(end.getTime() - 30 * 86_400_000),
            current_period_end: end,
          })),
        )
        .returning('id')
    ).map((r: { id: string }) => r.id);
    // The first one due is held (a PUT in progress, say) until the sweep has committed a batch past it.
    const holder = await db.knex.transaction();
    await holder('subscriptions').where({ id: ids[0] }).forUpdate().first();
    let released = false;
    const result = await renewDueSubscriptions(db.knex, new Date('2025-06-28T00:00:00.000Z'), {
      batchSize: 3,
      concurrency: 1,
      onBatch: async () => {
        if (!released) {
          released = true;
          await holder.commit();
        }
      },
    });
    t.true(released);
    t.is(result.errors, 0);
    t.is(result.invoicesCreated, 20);
    const renewed = await db.knex('subscriptions').whereIn('id', ids).where({ period_number: 1 }).count('* as n');
    t.is(Number(renewed[0]!.n), 20, 'the held one too');
  },
);
