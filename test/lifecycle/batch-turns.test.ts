/**
 * Issue 20: a sweep's batch sends its numbering statement before its turn, and the statement waits in PostgreSQL
 * for the batch claimed before it (subscriptions/renewal-repo.ts takeBatchTurn / batchTurnSql, migration
 * 20261125173000). It goes on only once that batch committed: one that rolled back (a worker killed between the
 * two) fails it, so a later batch never takes numbers ahead of an earlier one's subscriptions.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { batchTurnSql, takeBatchTurn, type BatchTurn } from '../../src/subscriptions/renewal-repo.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

/** A transaction that took its turn and stays open until `end` is called (commit or rollback). */
async function openBatch(knex: Knex): Promise<{ turn: BatchTurn; end: (how: 'commit' | 'rollback') => Promise<void> }> {
  const trx = await knex.transaction();
  const turn = await takeBatchTurn(trx);
  return { turn, end: async (how) => void (how === 'commit' ? await trx.commit() : await trx.rollback()) };
}

const waitsOn = (knex: Knex, turn: BatchTurn) => knex.transaction((trx) => trx.raw(`select ${batchTurnSql(turn)} as ok`).then((r) => r.rows[0].ok as boolean));

test('the next batch waits until the one before commits, then goes on', async (t) => {
  const before = await openBatch(db.knex);
  let done = false;
  const next = waitsOn(db.knex, before.turn).then((ok) => ((done = true), ok));
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
  t.true(await db.knex.transaction(async (trx) => {
    const own = await takeBatchTurn(trx);
    return (await trx.raw(`select ${batchTurnSql(own)} as ok`)).rows[0].ok as boolean;
  }));
});
