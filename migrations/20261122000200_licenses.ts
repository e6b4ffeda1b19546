import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table licenses (
      id uuid primary key default gen_random_uuid(),
      license_key text not null unique,
      customer_id uuid not null references customers(id) on delete restrict,
      product_id uuid not null references products(id) on delete restrict,
      status text not null default 'active' check (status in ('active', 'expired', 'suspended', 'revoked')),
      max_activations integer check (max_activations is null or max_activations >= 1),
      current_activations integer not null default 0 check (current_activations >= 0),
      features jsonb not null default '{}',
      expires_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index licenses_customer on licenses (customer_id);
    create index licenses_product on licenses (product_id);
    create index licenses_created on licenses (created_at, id);
    -- The daily sweep finds active licenses whose date has passed.
    create index licenses_expiring on licenses (expires_at) where status = 'active' and expires_at is not null;

    create table license_activations (
      license_id uuid not null references licenses(id) on delete cascade,
      device_id text not null,
      device_name text not null,
      activated_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      primary key (license_id, device_id)
    );
    create index license_activations_seen on license_activations (last_seen_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists license_activations, licenses cascade');
}
