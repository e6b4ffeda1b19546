import type { Knex } from 'knex';

// Payment providers (D-60..D-62) and dunning (D-83).
// provider_events: every verified inbound event, stored before it is acknowledged; unique per (provider,
//   event id) so a provider's retry or replay finds the first row and causes nothing twice.
// provider_credits: a provider payment that found nothing left to pay became store credit; the key makes
//   that happen once per provider payment even when two different events carry the same payment.
// checkout_sessions: hosted checkouts started for an invoice, for support and reconciliation.
// dunning_cases: one open case per invoice whose charge failed; `attempt` counts the retries made.
// charge_attempts: an off-session charge is written (pending) and committed before the provider is called,
//   with the idempotency key it sends, so a crash between the call and its record re-sends the same key
//   and the provider answers the first result instead of charging again (D-82).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table provider_events (
      id uuid primary key default gen_random_uuid(),
      provider text not null check (provider in ('provider_a', 'provider_b', 'provider_c')),
      event_id text not null,
      event_type text not null,
      payload jsonb not null,
      -- when the provider says it happened, and what it is about (a subscription id for status events):
      -- a status event older than one already applied to the same subscription changes nothing
      occurred_at timestamptz,
      subject_id text,
      status text not null default 'received' check (status in ('received', 'processed', 'ignored', 'failed')),
      failure_reason text,
      attempts integer not null default 0,
      created_at timestamptz not null default clock_timestamp(),
      processed_at timestamptz,
      unique (provider, event_id)
    );
    create index provider_events_created on provider_events (created_at, id);
    create index provider_events_status on provider_events (status, created_at);
    create index provider_events_subject on provider_events (provider, subject_id, occurred_at)
      where subject_id is not null;

    create table provider_credits (
      payment_method text not null,
      provider_reference text not null,
      customer_id uuid not null references customers(id),
      invoice_id uuid references invoices(id),
      amount numeric(20, 8) not null,
      currency text not null,
      created_at timestamptz not null default now(),
      primary key (payment_method, provider_reference)
    );

    create table checkout_sessions (
      id uuid primary key default gen_random_uuid(),
      provider text not null,
      provider_session_id text not null,
      invoice_id uuid not null references invoices(id),
      amount numeric(20, 8) not null,
      currency text not null,
      url text not null,
      created_at timestamptz not null default now(),
      unique (provider, provider_session_id)
    );
    create index checkout_sessions_invoice on checkout_sessions (invoice_id);

    create table dunning_cases (
      id uuid primary key default gen_random_uuid(),
      invoice_id uuid not null references invoices(id),
      subscription_id uuid references subscriptions(id),
      customer_id uuid not null references customers(id),
      status text not null default 'open' check (status in ('open', 'resolved', 'failed')),
      attempt integer not null default 0,
      next_attempt_at timestamptz,
      started_at timestamptz not null,
      closed_at timestamptz
    );
    create unique index dunning_cases_one_open on dunning_cases (invoice_id) where status = 'open';
    create index dunning_cases_due on dunning_cases (next_attempt_at) where status = 'open';

    create table charge_attempts (
      id uuid primary key default gen_random_uuid(),
      invoice_id uuid not null references invoices(id),
      attempt integer not null,
      idempotency_key text not null unique,
      amount numeric(20, 8) not null,
      currency text not null,
      provider_method_id text not null,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'declined')),
      provider_reference text,
      failure_reason text,
      created_at timestamptz not null default now(),
      completed_at timestamptz,
      unique (invoice_id, attempt)
    );
    create index charge_attempts_pending on charge_attempts (created_at) where status = 'pending';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table charge_attempts, dunning_cases, checkout_sessions, provider_credits, provider_events');
}
