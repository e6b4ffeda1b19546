import type { Knex } from 'knex';

/**
 * Issue 38 (taxes.md): named tax rates; the rates plans and customers name (T-2) and a customer's exemption (T-3);
 * each invoice keeps the rates it was priced with, copied when it is created (T-5), with its lines' rate ids, and
 * each credit note its share of them (T-6). A rate's percentage and inclusiveness never change (T-1), so an id in a
 * plan or a customer always means the same terms.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table tax_rates (
      id uuid primary key default uuidv7(),
      name text not null,
      percentage numeric(7, 4) not null check (percentage >= 0 and percentage <= 100),
      inclusive boolean not null default false,
      country text check (country ~ '^[A-Z]{2}$'),
      description text,
      active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    alter table plans add column tax_rate_ids uuid[] not null default '{}';
    alter table customers add column tax_rate_ids uuid[] not null default '{}',
      add column tax_exempt text not null default 'none' check (tax_exempt in ('none', 'exempt', 'reverse'));
    alter table invoices add column taxes jsonb not null default '[]',
      add column tax_exempt text not null default 'none' check (tax_exempt in ('none', 'exempt', 'reverse')),
      add column buyer_tax_id text;
    alter table invoice_line_items add column tax_rate_ids uuid[] not null default '{}';
    alter table credit_notes add column taxes jsonb not null default '[]';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table credit_notes drop column taxes;
    alter table invoice_line_items drop column tax_rate_ids;
    alter table invoices drop column taxes, drop column tax_exempt, drop column buyer_tax_id;
    alter table customers drop column tax_rate_ids, drop column tax_exempt;
    alter table plans drop column tax_rate_ids;
    drop table tax_rates;
  `);
}
