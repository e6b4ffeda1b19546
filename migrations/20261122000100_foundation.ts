import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table users (
      id uuid primary key default gen_random_uuid(),
      email text not null,
      password_hash text,
      role text not null default 'admin',
      auth_source text not null default 'local' check (auth_source in ('local', 'idp')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index users_email_lower on users (lower(email));

    create table sessions (
      id uuid primary key default gen_random_uuid(),
      token_hash text not null unique,
      user_id uuid not null references users(id) on delete cascade,
      expires_at timestamptz not null,
      ip text,
      user_agent text,
      created_at timestamptz not null default now()
    );
    create index sessions_user on sessions (user_id);
    create index sessions_expires on sessions (expires_at);

    create table login_failures (
      id bigserial primary key,
      email text not null,
      ip text not null,
      created_at timestamptz not null default now()
    );
    create index login_failures_email on login_failures (email, created_at);
    create index login_failures_ip on login_failures (ip, created_at);

    create table settings (
      key text primary key,
      value jsonb not null,
      updated_at timestamptz not null default now()
    );

    create table products (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      product_type text not null check (product_type in ('licensed', 'saas', 'api')),
      description text,
      price numeric not null check (price >= 0),
      currency char(3) not null default 'USD',
      status text not null default 'active' check (status in ('active', 'archived')),
      monthly_revenue numeric not null default 0,
      active_users integer not null default 0,
      daily_active_users integer not null default 0,
      churn_rate numeric not null default 0,
      metrics_refreshed_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index products_created on products (created_at, id);

    create table customers (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      email text not null,
      company text,
      tier text check (tier in ('starter', 'professional', 'enterprise')),
      billing_address text,
      tax_id text,
      payment_method text,
      health_score integer not null default 100 check (health_score between 0 and 100),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      search tsvector generated always as (
        setweight(to_tsvector('simple', coalesce(name, '')), 'A') ||
        setweight(to_tsvector('simple', coalesce(company, '')), 'B') ||
        setweight(to_tsvector('simple', coalesce(email, '') || ' ' || translate(coalesce(email, ''), '@._-+', '     ')),
          'C')
      ) stored
    );
    create unique index customers_email_lower on customers (lower(email));
    create index customers_created on customers (created_at, id);
    create index customers_search on customers using gin (search);

    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      customer_id uuid not null references customers(id) on delete cascade,
      prefix text not null,
      key_hash text not null unique,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index api_keys_customer on api_keys (customer_id);
    create index api_keys_created on api_keys (created_at, id);

    create table events (
      id text primary key,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null default now()
    );
    create index events_created on events (created_at, id);
    create index events_type on events (type, created_at);

    create table idempotency_keys (
      scope text not null,
      key text not null,
      request_hash text not null,
      status text not null check (status in ('in_progress', 'completed')),
      response_status integer,
      response_body jsonb,
      response_headers jsonb,
      locked_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      primary key (scope, key)
    );
    create index idempotency_keys_created on idempotency_keys (created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists idempotency_keys, events, api_keys, customers, products, settings,
      login_failures, sessions, users cascade;
  `);
}
