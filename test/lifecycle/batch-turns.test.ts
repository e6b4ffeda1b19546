/**
 * Issue 20: a sweep's batch sends its numbering statement before its turn, and the statement waits in PostgreSQL
 * for the batch claimed before it (subscriptions/renewal-repo.ts claimDueSubscriptions / batchTurnSql, migration
 * 20261125173000). It goes on only once that batch committed: one that rolled back (a worker killed between the
 * two) fails it, so a later batch never takes numbers ahead of an earlier one's subscriptions.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { batchTurnSql, claimDueSubscriptions, type BatchTurn } from '../../src/subscriptions/renewal-repo.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
const AS_OF = new Date('2025-06-20T00:00:00.000Z');

test.before(async () => {
  db = await createTestDatabase();
  // Due subscriptions for the batches to claim: a batch takes its turn by claiming (one each, skipping those held).
  const [customer] = await db.knex('customers').insert({ name: 'C', email: 'c@turns.test' }).returning('id');
  const [product] = await db.knex('products').insert({ name: 'P', product_type: 'saas', price: '10' }).returning('id');
  const [plan] = await db
    .knex('plans')
    .insert({
      product_id: product.id,
      name: 'Monthly',
      pricing_model: 'flat',
      billing_cycle: 'monthly',
      base_price: '9.00',
      currency: 'USD',
    })
    .returning('id');
  const anchor = new Date('2025-05-01T09:00:00.000Z');
  await db.knex('subscriptions').insert(
    Array.from({ length: 6 }, () => ({
      customer_id: customer.id,
      plan_id: plan.id,
      status: 'active',
      billing_cycle: 'monthly',
      billing_anchor: anchor,
      period_number: 0,
      current_period_start: anchor,
      current_period_end: new Date('2025-06-01T09:00:00.000Z'),
    })),
  );
});
test.after.always(async () => {
  await db?.drop();
});

/** The turn a batch takes by claiming one due subscription in `trx`. */
async function claimTurn(trx: Knex.Transaction): Promise<BatchTurn> {
  const { turn } = await claimDueSubscriptions(trx, AS_OF, 1);
  if (!turn) throw new Error('no due subscription left to claim');
  return turn;
}

/** A transaction that claimed (and took its turn) and stays open until `end` is called (commit or rollback). */
async function openBatch(knex: Knex): Promise<{ turn: BatchTurn; end: (how: 'commit' | 'rollback') => Promise<void> }> {
  const trx = await knex.transaction();
  const turn = await claimTurn(trx);
  return { turn, end: async (how) => void (how === 'commit' ? await trx.commit() : await trx.rollback()) };
}

const waitsOn = (knex: Knex, turn: BatchTurn) =>
  knex.transaction((trx) => trx.raw(`select ${batchTurnSql(turn)} as ok`).then((r) => r.rows[0].ok as boolean));

test('the next batch waits until the one before commits, then goes on', async (t) => {
  const before = await openBatch(db.knex);
  let done = false;
  const next = waitsOn(db.knex, before.turn).then((ok) => {
    done = true;
    return ok;
  });
  await new Promise((r) => setTimeout(r, 300));
  t.false(done, 'it waits while the batch before is open');
  await before.end('commit');
  t.true(await next);
});

test('a batch before that rolled back fails the next one (it is renewed again, after it)', async (t) => {
  const before = await openBatch(db.knex);
  const next = waitsOn(db.knex, before.turn);
  await new Promise((r) => setTimeout(r, 200));
  await before.end('rollback');
  const error = await t.throwsAsync(next);
  t.like(error, { code: '40001' });
  t.regex(error!.message, /did not commit/);
});

test('a batch long committed is no wait at all; its own transaction is never waited on', async (t) => {
  const before = await openBatch(db.knex);
  await before.end('commit');
  t.true(await waitsOn(db.knex, before.turn));
  t.true(
    await db.knex.transaction(async (trx) => {
      const own = await claimTurn(trx);
      return (await trx.raw(`select ${batchTurnSql(own)} as ok`)).rows[0].ok as boolean;
    }),
  );
});
