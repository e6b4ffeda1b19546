import type { Knex } from 'knex';

// now() is the transaction's start time, so events recorded in one transaction (payment.succeeded, then
// invoice.paid) shared a timestamp and listed in random order; clock_timestamp() keeps their order.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table events alter column created_at set default clock_timestamp()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table events alter column created_at set default now()');
}
