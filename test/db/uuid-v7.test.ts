/**
 * Time-ordered row ids (D-2, docs/decisions.md "Time-ordered row ids"): the service's own (crypto/ids.ts newUuid), the
 * database's defaults (migration 20261126090000: PostgreSQL's uuidv7()), and the same-layout function the migration
 * defines on a server older than 18, all version 7, RFC 9562 variant, carrying their creation time, and ascending.
 */
import test from 'ava';
import { newUuid, pooledRandomBytes } from '../../src/crypto/ids.ts';
import { UUIDV7_FALLBACK_SQL } from '../../migrations/20261126090000_uuid_v7_defaults.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCustomer } from '../helpers/factories.ts';

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

function assertV7Near(t: import('ava').ExecutionContext, id: string, before: number, after: number) {
  t.regex(id, UUID_V7);
  const ms = millisOf(id);
  t.true(ms >= before && ms <= after, `${id} carries ${new Date(ms).toISOString()}, not a time between the calls`);
}

test('newUuid: version 7, its creation time, strictly ascending within a millisecond, and random beyond', (t) => {
  const before = Date.now();
  const ids = Array.from({ length: 10_000 }, () => newUuid());
  const after = Date.now();
  for (const id of [ids[0]!, ids[9_999]!]) assertV7Near(t, id, before, after + 3);
  for (let i = 1; i < ids.length; i++)
    if (!(ids[i - 1]! < ids[i]!)) t.fail(`${ids[i - 1]} then ${ids[i]}: not ascending`);
  t.is(new Set(ids).size, ids.length);
  t.true(ids.every((id) => UUID_V7.test(id)));
  // The last 62 bits are random: two ids of the same millisecond differ there too.
  t.not(ids[0]!.slice(19), ids[1]!.slice(19));
});

test('pooledRandomBytes hands out each byte once', (t) => {
  const parts = Array.from({ length: 600 }, () => pooledRandomBytes(15).toString('hex'));
  t.is(new Set(parts).size, parts.length);
  t.true(parts.every((p) => p.length === 30));
});

test('rows the database names get version 7 ids of their time, in the order written', async (t) => {
  const before = Date.now();
  const first = await insertCustomer(db.knex);
  const second = await insertCustomer(db.knex);
  const { rows } = await db.knex.raw<{ rows: { id: string }[] }>(
    `insert into audit_log (actor, action, target_type, target_id) values ('system', 'test.one', 'test', 'a'), ` +
      `('system', 'test.two', 'test', 'b') returning id`,
  );
  const after = Date.now();
  for (const id of [first.id, second.id, rows[0]!.id, rows[1]!.id]) assertV7Near(t, id, before - 5, after + 5);
  t.true(rows[0]!.id < rows[1]!.id);
  const { rows: defaults } = await db.knex.raw<{ rows: { table_name: string; column_default: string }[] }>(
    `select table_name, column_default from information_schema.columns
      where table_schema = current_schema() and column_name = 'id' and data_type = 'uuid'
        and column_default is not null`,
  );
  t.true(defaults.length >= 15);
  t.deepEqual(
    defaults.filter((d) => d.column_default !== 'uuidv7()'),
    [],
  );
});

test('the fallback for PostgreSQL before 18 makes the same layout', async (t) => {
  const before = Date.now();
  // Defined as the migration would (a function in this session's temporary schema), then called once per row.
  const rows = await db.knex.transaction(async (trx) => {
    await trx.raw(
      `create function pg_temp.uuidv7_fallback() returns uuid language sql volatile as $fn$ ${UUIDV7_FALLBACK_SQL} ` +
        `$fn$`,
    );
    return (
      await trx.raw<{ rows: { id: string }[] }>('select pg_temp.uuidv7_fallback() as id from generate_series(1, 50)')
    ).rows;
  });
  const after = Date.now();
  for (const { id } of rows) assertV7Near(t, id, before - 5, after + 5);
  t.is(new Set(rows.map((r) => r.id)).size, 50);
});
