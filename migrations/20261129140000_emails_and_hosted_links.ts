import type { Knex } from 'knex';

/**
 * Issue 36. `emails` is the outbox (M-2): a row is written in the transaction of the change that causes it, and the
 * emails worker claims due rows (`next_attempt_at`, a lease in `lease_until`) and sends them. One row per occasion
 * (M-3): the unique (type, occasion) index refuses a second row for the same invoice, payment or reminder; a resend
 * is a new row pointing at its original, outside that index. `message_id` is fixed when the row is written, so an
 * email re-sent after a crash carries the Message-ID of the first send.
 *
 * `hosted_invoice_links` holds each invoice's hosted page token (H-1): looked up by its SHA-256 (`token_hash`), the
 * token itself kept in the envelope of every secret (crypto/envelope.ts) so that the link answered is the same on
 * every read. Replacing it (H-3) replaces the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table emails (
      id uuid primary key default uuidv7(),
      type text not null,
      -- Checked at commit, as invoice lines' key is: an invoice's email is written before the invoice, whose own key
      -- must be the one that refuses an unknown customer (customer_not_found).
      customer_id uuid not null references customers(id) on delete cascade deferrable initially deferred,
      occasion text not null,
      data jsonb not null default '{}',
      status text not null check (status in ('captured', 'queued', 'sent', 'failed', 'skipped')),
      to_address text,
      subject text,
      html text,
      text_body text,
      message_id text not null unique,
      attempts integer not null default 0,
      attempt_log jsonb not null default '[]',
      last_error text,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      resent_from uuid references emails(id) on delete set null,
      sent_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index emails_once_per_occasion on emails (type, occasion) where resent_from is null;
    create index emails_due on emails (next_attempt_at) where status = 'queued';
    create index emails_of_customer on emails (customer_id, created_at desc, id desc);
    create index emails_newest on emails (created_at desc, id desc);

    create table hosted_invoice_links (
      invoice_id uuid primary key references invoices(id) on delete cascade,
      token_hash text not null unique,
      token text not null,
      created_at timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table hosted_invoice_links; drop table emails');
}
