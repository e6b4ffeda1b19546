import type { Knex } from 'knex';

// Webhook secret rotation (issue 18): a rotated endpoint keeps its previous secret until
// `previous_secret_expires_at`, and deliveries meanwhile carry a Standard Webhooks signature with each secret,
// so a receiver can switch to the new secret without refusing a delivery. `secret_rotated_at` is when the
// current secret was set (shown on the console and in the audit log, never the secret itself).
// The console's failed-deliveries filter reads an endpoint's deliveries of one status newest first.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhook_endpoints
      add column secret_rotated_at timestamptz,
      add column previous_secret text,
      add column previous_secret_expires_at timestamptz;
    create index webhook_deliveries_endpoint_status on webhook_deliveries (endpoint_id, status, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists webhook_deliveries_endpoint_status;
    alter table webhook_endpoints drop column secret_rotated_at, drop column previous_secret,
      drop column previous_secret_expires_at;
  `);
}
