import type { Knex } from 'knex';

/**
 * A pending refund's provider call is a lease (src/refunds/service.ts): `call_lease_until` is set while the provider
 * is being asked for the reservation and cleared when the call ends without a known outcome (a 5xx, a timeout). A
 * pending refund whose lease is cleared or past is not being asked by anyone: asking for the same refund again
 * resumes it under its own Idempotency-Key instead of making a second one. Rows from before have none: the same.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table refunds add column call_lease_until timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table refunds drop column call_lease_until');
}
