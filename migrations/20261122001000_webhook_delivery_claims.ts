import type { Knex } from 'knex';

// Webhook workers claim due deliveries straight from webhook_deliveries (FOR UPDATE SKIP LOCKED, oldest due
// first): `next_attempt_at` of a pending delivery is when it is due, and while a worker sends it, the end of
// that worker's lease. Parked deliveries (endpoint disabled) have none and stay out of the index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at)
      where status = 'pending' and next_attempt_at is not null
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_due');
}
