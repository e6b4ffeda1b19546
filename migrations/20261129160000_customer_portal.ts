import type { Knex } from 'knex';

/**
 * Issue 37, the customer portal (P-1, P-2). Every secret is kept only as its SHA-256 (`token_hash`, `code_hash`):
 * - `portal_links`: a sign-in link of an hour that works once (`used_at`), made by the admin or v1 API.
 * - `portal_sessions`: a signed-in browser for 12 hours (its cookie `portal_session`), ended by logout.
 * - `portal_codes`: the emailed 6-digit code; one row per customer (a new code replaces the old one), its wrong
 *   tries counted, locked at 5.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table portal_links (
      id uuid primary key default uuidv7(),
      customer_id uuid not null references customers(id) on delete cascade,
      token_hash text not null unique,
      return_url text,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index portal_links_expires on portal_links (expires_at);

    create table portal_sessions (
      id uuid primary key default uuidv7(),
      customer_id uuid not null references customers(id) on delete cascade,
      token_hash text not null unique,
      return_url text,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    );
    create index portal_sessions_expires on portal_sessions (expires_at);

    create table portal_codes (
      customer_id uuid primary key references customers(id) on delete cascade,
      id uuid not null default uuidv7(),
      code_hash text not null,
      tries integer not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table portal_codes; drop table portal_sessions; drop table portal_links');
}
