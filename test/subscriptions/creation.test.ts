/**
 * Subscription creation is one transaction: a refusal (an inactive plan, an unknown customer) rolls it back and
 * leaves the connection usable with the numbers gapless; inside a caller's transaction nothing commits early;
 * concurrent creations for one customer spend its store credit once, however its id is written; and a creation
 * refused for its plan takes no ledger lock.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createKnex } from '../../src/db/knex.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { footprintOf, makePlan, newCustomer } from './fixtures.ts';

let database: TestDatabase;
/** One connection: a refusal must leave it clean for the next creation. */
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

test.serial('an inactive plan is refused, the transaction rolls back and the connection creates again', async (t) => {
  const customer = await newCustomer(database.knex);
  const inactive = await makePlan(database.knex, '5.00');
  await database.knex('plans').where({ id: inactive.id }).update({ active: false });
  const before = await subscribe(one, customer.id);
  await t.throwsAsync(subscribe(one, customer.id, inactive.id), { message: /inactive/ });
  t.is((await one.raw('select count(*)::int as n from subscriptions where plan_id = ?', [inactive.id])).rows[0].n, 0);
  t.true(
    (await one.raw('select xact_start = query_start as fresh from pg_stat_activity where pid = pg_backend_pid()'))
      .rows[0].fresh,
    'no transaction left open',
  );
  const after = await subscribe(one, customer.id);
  t.is(await numberOf(after.id), (await numberOf(before.id)) + 1);
});

test.serial('an unknown customer is customer_not_found, writes nothing, and its number comes back', async (t) => {
  const unknown = '00000000-0000-4000-8000-00000000cafe';
  const customer = await newCustomer(database.knex);
  const before = await subscribe(one, customer.id);
  const error = await t.throwsAsync(subscribe(one, unknown));
  t.is((error as { code?: string }).code, 'customer_not_found');
  t.deepEqual(await footprintOf(database.knex, unknown), { subscriptions: 0, invoices: 0, events: 0 });
  const after = await subscribe(one, customer.id);
  t.is(await numberOf(after.id), (await numberOf(before.id)) + 1);
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
  'concurrent creations for one customer spend its credit once, however its id is written ' +
    "(the lock is the stored id's)",
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
      // cents, test-side only
      const applied = invoices.reduce((sum, i) => sum + Math.round(Number(i.credit_applied) * 100), 0);
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
  'a creation refused for its plan (inactive) takes no ledger lock: it does not wait for a holder',
  async (t) => {
    const customer = await newCustomer(database.knex);
    // Store credit to spend: an accepted creation then takes the customer's ledger lock (one without credit has none
    // to spend and takes none, credits/ledger.ts).
    await database
      .knex('credit_ledger')
      .insert({ customer_id: customer.id, currency: 'USD', amount: '5.00', kind: 'credit', description: 'Goodwill' });
    const inactive = await makePlan(database.knex, '5.00');
    await database.knex('plans').where({ id: inactive.id }).update({ active: false });
    const holder = createKnex(database.url, 1);
    const within = <T>(ms: number, work: Promise<T>) =>
      Promise.race([work, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms))]);
    let accepted: Promise<string> | undefined;
    try {
      await holder.transaction(async (trx) => {
        // The key of credits/ledger-repo.ts lockCustomerLedgers.
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
