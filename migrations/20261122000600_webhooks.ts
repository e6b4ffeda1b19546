import type { Knex } from 'knex';

// Outbound webhooks (D-71, D-72): endpoints, one delivery row per (event, subscribed endpoint), and a log
// of every attempt. Deliveries and attempts go with their endpoint: deleting an endpoint stops its sends.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      url text not null,
      events text[] not null,
      secret text not null,
      enabled boolean not null default true,
      created_at timestamptz not null default clock_timestamp(),
      updated_at timestamptz not null default clock_timestamp()
    );
    create index webhook_endpoints_created on webhook_endpoints (created_at, id);
    -- the fan-out asks "enabled endpoints whose events overlap {type, '*'}"
    create index webhook_endpoints_events on webhook_endpoints using gin (events) where enabled;

    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
      event_id text not null references events(id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempt_count integer not null default 0,
      next_attempt_at timestamptz default clock_timestamp(),
      delivered_at timestamptz,
      created_at timestamptz not null default clock_timestamp(),
      updated_at timestamptz not null default clock_timestamp(),
      unique (endpoint_id, event_id)
    );
    create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at, id);
    create index webhook_deliveries_event on webhook_deliveries (event_id);

    create table webhook_delivery_attempts (
      id uuid primary key default gen_random_uuid(),
      delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
      attempt integer not null,
      status_code integer,
      latency_ms integer not null,
      error text,
      response_body text,
      at timestamptz not null default clock_timestamp()
    );
    create index webhook_delivery_attempts_delivery on webhook_delivery_attempts (delivery_id, at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists webhook_delivery_attempts, webhook_deliveries, webhook_endpoints');
}
