import type { Knex } from 'knex';

// Webhook endpoint health shared by the webhooks workers (issue 20): what the dispatchers learned of an endpoint
// from its last answers (how many sends it may have in flight, whether its last attempt failed), written with the
// attempts' records and read back by every webhooks worker, so two workers see the same health. Logged: it
// changes at the pace of attempts, not requests, and a promoted replica should keep it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_endpoint_health (
      endpoint_id uuid primary key references webhook_endpoints(id) on delete cascade,
      allowed integer not null,
      failing boolean not null,
      updated_at timestamptz not null default clock_timestamp()
    );
    create index webhook_endpoint_health_updated on webhook_endpoint_health (updated_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists webhook_endpoint_health');
}
