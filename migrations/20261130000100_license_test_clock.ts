import type { Knex } from 'knex';

/**
 * TC-2, "licenses expire by it": a license of a clock customer carries the clock (as emails do), so the statements that
 * judge a license's date leave a clock license's date to its clock (stored as the clock moves) and judge every other
 * one by the database's `now()`, without reading the clock's table on the hot path.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table licenses add column test_clock_id uuid;
    update licenses l set test_clock_id = c.test_clock_id
      from customers c where c.id = l.customer_id and c.test_clock_id is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table licenses drop column test_clock_id`);
}
