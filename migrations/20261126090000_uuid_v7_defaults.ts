import type { Knex } from 'knex';

/**
 * Row ids made by the database become time-ordered UUIDv7 (D-2 allows v4 or v7; docs/decisions.md "Time-ordered row
 * ids", issue 20), like the ones the service makes (src/crypto/ids.ts): rows written together land together at the
 * right edge of each id index instead of at random pages. Existing ids stay as they are; both kinds are UUIDs.
 *
 * PostgreSQL 18 has uuidv7(); on an older server this defines one of the same layout (48 bits of milliseconds, version
 * 7, variant, random rest), so the defaults read the same everywhere.
 */
export const UUIDV7_FALLBACK_SQL = `
  select encode(set_bit(set_bit(
    overlay(uuid_send(gen_random_uuid()) placing substring(int8send(floor(extract(epoch
      from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6),
    52, 1), 53, 1), 'hex')::uuid`;

/** Every table of this schema whose `id` defaults to `from` gets `to` as its default. */
function swapIdDefaults(knex: Knex, from: string, to: string) {
  return knex.raw(`
    do $do$
    declare col record;
    begin
      for col in
        select c.relname as table_name
          from pg_attrdef d
          join pg_class c on c.oid = d.adrelid
          join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
          join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum and a.attname = 'id'
         where pg_get_expr(d.adbin, d.adrelid) = '${from}'
      loop
        execute format('alter table %I alter column id set default ${to}', col.table_name);
      end loop;
    end
    $do$`);
}

export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: unknown[] }>(
    `select 1 from pg_proc where proname = 'uuidv7' and pronargs = 0`,
  );
  if (rows.length === 0) {
    await knex.raw(
      `create function uuidv7() returns uuid language sql volatile parallel safe as $fn$ ${UUIDV7_FALLBACK_SQL} $fn$`,
    );
  }
  await swapIdDefaults(knex, 'gen_random_uuid()', 'uuidv7()');
}

export async function down(knex: Knex): Promise<void> {
  await swapIdDefaults(knex, 'uuidv7()', 'gen_random_uuid()');
  // The fallback up defined (in this schema; PostgreSQL 18's own lives in pg_catalog and stays).
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>(
    `select n.nspname as schema from pg_proc p join pg_namespace n on n.oid = p.pronamespace where p.proname = ` +
      `'uuidv7' and p.pronargs = 0 and n.nspname = current_schema()`,
  );
  // Named with its schema: unqualified, the name is pg_catalog's first.
  if (rows[0]) await knex.raw('drop function ??.uuidv7()', [rows[0].schema]);
}
