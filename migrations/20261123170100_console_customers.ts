import type { Knex } from 'knex';

// The console's customer pages (issue 17). A customer's timeline reads the events whose payload names it,
// newest first, a page at a time: the expression index answers that without scanning every event. The
// list filtered by tier pages newest first: (tier, created_at, id) serves each page without a sort.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index events_customer on events ((data->>'customerId'), created_at, id);
    create index customers_tier_created on customers (tier, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists customers_tier_created;
    drop index if exists events_customer;
  `);
}
