import type { Knex } from 'knex';

/**
 * Issue 34 (console.md C-12 to C-14): a payment's day received and the admin's note; the closed reason code of
 * refunds and credit notes (checked by the API's schema, like the other closed lists of text columns). Existing
 * payments were received when they were recorded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table payments add column received_at timestamptz, add column note text;
    update payments set received_at = created_at;
    alter table payments alter column received_at set not null, alter column received_at set default now();
    create index payments_received on payments (received_at, id);
    alter table refunds add column reason_code text;
    alter table credit_notes add column reason_code text;
    -- C-15's search: an invoice number's and a provider reference's beginning (bench/console.ts, p99 < 100 ms).
    create index invoices_number_prefix on invoices (invoice_number text_pattern_ops);
    create index payments_reference_prefix on payments (lower(provider_reference) text_pattern_ops)
      where provider_reference is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table credit_notes drop column if exists reason_code;
    drop index if exists payments_reference_prefix;
    drop index if exists invoices_number_prefix;
    alter table refunds drop column if exists reason_code;
    drop index if exists payments_received;
    alter table payments drop column if exists note, drop column if exists received_at;
  `);
}
