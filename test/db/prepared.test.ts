/**
 * db/prepared.ts: named statements are prepared once per connection; with DB_NAMED_STATEMENTS=false (an old
 * transaction-mode pooler, which would hand the Bind of a prepared name to a server connection that never saw its
 * Parse) the same text runs unnamed and leaves nothing prepared on the connection.
 */
import test from 'ava';
import { createKnex } from '../../src/db/knex.ts';
import { queryPrepared } from '../../src/db/prepared.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => database?.drop());

const statement = { name: 'test.sum', text: 'select $1::int + $2::int as sum' };

async function preparedOnConnection(namedStatements: boolean): Promise<{ sums: number[]; prepared: string[] }> {
  const knex = createKnex(database.url, 1, namedStatements);
  try {
    // One transaction: one connection, whose session-level pg_prepared_statements tells what was prepared.
    return await knex.transaction(async (trx) => {
      const sums: number[] = [];
      for (const [a, b] of [
        [1, 2],
        [3, 4],
      ])
        sums.push(Number((await queryPrepared<{ sum: number }>(trx, statement, [a, b]))[0]?.sum));
      const prepared = (await trx.raw('select name from pg_prepared_statements order by name')).rows.map(
        (r: { name: string }) => r.name,
      );
      return { sums, prepared };
    });
  } finally {
    await knex.destroy();
  }
}

test('a named statement is prepared on the connection and answers every call', async (t) => {
  t.deepEqual(await preparedOnConnection(true), { sums: [3, 7], prepared: ['test.sum'] });
});

test('with named statements off the same text answers the same and nothing is prepared', async (t) => {
  t.deepEqual(await preparedOnConnection(false), { sums: [3, 7], prepared: [] });
});
