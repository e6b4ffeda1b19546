/**
 * Issue 20: a subscription invoiced at creation without a coupon is two queries on a pooled connection
 * (db/hot-lock.ts pooledHotLockTransaction): BEGIN with the subscription's statement and the ledger reads, then the
 * invoice's last statement with the COMMIT, each statement prepared once per connection. A refusal (in the
 * statement or after it, in JS) must roll back and leave the connection usable, a connection that lost its prepared
 * statements must still create, and numbers stay gapless; inside a caller's transaction nothing commits early.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/audit/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { footprintOf, makePlan, newCustomer } from './fixtures.ts';

let database: TestDatabase;
/** One connection: what a creation prepares is what the next one finds, and a refusal must leave it clean. */
let one: Knex;
let planId: string;
test.before(async () => {
  database = await createTestDatabase();
  one = createKnex(database.url, 1);
  planId = (await makePlan(database.knex, '20.00')).id;
});
test.after.always(async () => {
  await one?.destroy();
  await database?.drop();
});

const subscribe = async (db: Knex, customerId: string, plan = planId) =>
  createSubscription(db, { customerId, planId: plan, billingCycle: 'monthly' }, SYSTEM_ACTOR);
const seq = (n: string) => Number(n.split('-')[2]);
async function numberOf(subscriptionId: string): Promise<number> {
  const invoice = await database.knex('invoices').where({ subscription_id: subscriptionId }).first();
  return seq(invoice.invoice_number);
}
async function preparedHere(): Promise<{ statement: string; calls: number }[]> {
  const result = await one.raw(
    `select statement, generic_plans + custom_plans as calls from pg_prepared_statements where name like 'billing\\_hot\\_%'`,
  );
  return result.rows.map((r: { statement: string; calls: string | number }) => ({
    statement: r.statement,
    calls: Number(r.calls),
  }));
}
const auditRows = async (subscriptionId: string) =>
  (await database.knex('audit_log').where({ target_type: 'subscription', target_id: subscriptionId })).length;

test.serial('each statement is prepared once on a connection and executed again there', async (t) => {
  const customer = await newCustomer(database.knex);
  const a = await subscribe(one, customer.id);
  const b = await subscribe(one, customer.id);
  t.is(await numberOf(b.id), (await numberOf(a.id)) + 1);
  const prepared = await preparedHere();
  // The subscription's statement (which takes the ledger lock), the balance read and the numbering statement.
  t.is(prepared.length, 3, prepared.map((p) => p.statement.slice(0, 60)).join('\n'));
  t.true(
    prepared.every((p) => p.calls === 2),
    'both creations ran each prepared statement',
  );
  t.true(prepared.some((p) => p.statement.includes('insert into subscriptions')));
  t.is(await auditRows(b.id), 1);
});

test.serial(
  'a plan refused after the first query (inactive) rolls back and the connection creates again',
  async (t) => {
    const customer = await newCustomer(database.knex);
    const inactive = await makePlan(database.knex, '5.00');
    await database.knex('plans').where({ id: inactive.id }).update({ active: false });
    const before = await subscribe(one, customer.id);
    await t.throwsAsync(subscribe(one, customer.id, inactive.id), { message: /inactive/ });
    // Nothing of the refused creation is left, and no transaction is left open on the connection.
    t.is((await one.raw('select count(*)::int as n from subscriptions where plan_id = ?', [inactive.id])).rows[0].n, 0);
    t.true(
      (await one.raw('select xact_start = query_start as fresh from pg_stat_activity where pid = pg_backend_pid()'))
        .rows[0].fresh,
      'no transaction left open',
    );
    const after = await subscribe(one, customer.id);
    t.is(await numberOf(after.id), (await numberOf(before.id)) + 1);
  },
);

test.serial(
  'an unknown customer is customer_not_found, writes nothing, and the connection creates again',
  async (t) => {
    const unknown = '00000000-0000-4000-8000-00000000cafe';
    const customer = await newCustomer(database.knex);
    const before = await subscribe(one, customer.id);
    const error = await t.throwsAsync(subscribe(one, unknown));
    t.is((error as { code?: string }).code, 'customer_not_found');
    t.deepEqual(await footprintOf(database.knex, unknown), { subscriptions: 0, invoices: 0, events: 0 });
    const after = await subscribe(one, customer.id);
    t.is(await numberOf(after.id), (await numberOf(before.id)) + 1);
    t.is((await preparedHere()).length, 3, 'what was prepared is still known and used');
  },
);

test.serial('a connection that lost its prepared statements (DISCARD ALL) creates again, once', async (t) => {
  const customer = await newCustomer(database.knex);
  const before = await subscribe(one, customer.id);
  await one.raw('DISCARD ALL');
  const after = await subscribe(one, customer.id);
  t.is(await numberOf(after.id), (await numberOf(before.id)) + 1);
  t.is(await auditRows(after.id), 1, 'the retried creation wrote one audit row');
  t.is((await database.knex('subscriptions').where({ customer_id: customer.id })).length, 2, 'and one subscription');
  t.true((await preparedHere()).every((p) => p.calls === 1));
});

test.serial("inside a caller's transaction nothing commits early: its rollback leaves nothing", async (t) => {
  const customer = await newCustomer(database.knex);
  await t.throwsAsync(
    one.transaction(async (trx) => {
      const created = await createSubscription(
        trx,
        { customerId: customer.id, planId, billingCycle: 'monthly' },
        SYSTEM_ACTOR,
      );
      t.truthy((await trx('invoices').where({ subscription_id: created.id }).first())?.invoice_number);
      throw new Error('the caller fails');
    }),
    { message: 'the caller fails' },
  );
  t.deepEqual(await footprintOf(database.knex, customer.id), { subscriptions: 0, invoices: 0, events: 0 });
});

test.serial(
  "concurrent creations for one customer spend its credit once, however its id is written (the lock is the stored id's)",
  async (t) => {
    const customer = await newCustomer(database.knex);
    await database
      .knex('credit_ledger')
      .insert({ customer_id: customer.id, currency: 'USD', amount: '30.00', kind: 'credit', description: 'test' });
    const pool = createKnex(database.url, 6);
    try {
      // Half name the customer in capitals: the same customer, so the same ledger lock.
      const created = await Promise.all(
        Array.from({ length: 6 }, (_, i) => subscribe(pool, i % 2 === 0 ? customer.id : customer.id.toUpperCase())),
      );
      const invoices = await database.knex('invoices').whereIn(
        'subscription_id',
        created.map((s) => s.id),
      );
      const applied = invoices.reduce((sum, i) => sum + Math.round(Number(i.credit_applied) * 100), 0); // cents, test-side only
      t.is(applied, 3000, 'all the credit, once');
      const entries = await database.knex('credit_ledger').where({ customer_id: customer.id });
      t.is(
        entries.reduce((sum, e) => sum + Math.round(Number(e.amount) * 100), 0),
        0,
        'nothing left, nothing overspent',
      );
    } finally {
      await pool.destroy();
    }
  },
);

test.serial(
  'a creation refused in its statement (inactive plan) takes no ledger lock: it does not wait for a holder',
  async (t) => {
    const customer = await newCustomer(database.knex);
    const inactive = await makePlan(database.knex, '5.00');
    await database.knex('plans').where({ id: inactive.id }).update({ active: false });
    const holder = createKnex(database.url, 1);
    const within = <T>(ms: number, work: Promise<T>) =>
      Promise.race([work, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms))]);
    let accepted: Promise<string> | undefined;
    try {
      await holder.transaction(async (trx) => {
        // The key of credits/ledger-repo.ts ledgerLockSql.
        await trx.raw(`select pg_advisory_xact_lock(hashtext('credit_ledger'), hashtext(lower(?)))`, [customer.id]);
        const refused = subscribe(one, customer.id, inactive.id).then(
          () => 'created',
          (error: Error) => error.message,
        );
        t.regex(String(await within(2000, refused)), /inactive/, 'answered while the lock is held');
        // An accepted creation does wait for it: the lock is the one every ledger writer takes.
        accepted = subscribe(one, customer.id).then(() => 'created');
        t.is(await within(300, accepted), 'still waiting');
      });
    } finally {
      await holder.destroy();
    }
    t.is(await accepted, 'created', 'and creates once the holder commits');
  },
);
