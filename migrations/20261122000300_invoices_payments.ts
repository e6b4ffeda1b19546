import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- One row per (document kind, year): the creating transaction bumps it, so numbers are gapless
    -- (a rolled-back creation rolls its number back) and unique (the row lock orders creators).
    create table document_counters (
      kind text not null check (kind in ('INV', 'CN')),
      year integer not null,
      last_seq integer not null,
      primary key (kind, year)
    );

    create table invoices (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id) on delete restrict,
      subscription_id uuid,
      invoice_number text not null unique,
      status text not null check (status in ('draft', 'issued', 'paid', 'overdue', 'void')),
      currency char(3) not null,
      tax_rate numeric not null default 0,
      subtotal numeric not null,
      tax_amount numeric not null,
      total numeric not null check (total >= 0),
      amount_paid numeric not null default 0,
      credit_applied numeric not null default 0,
      credited_amount numeric not null default 0,
      due_date timestamptz,
      issued_at timestamptz,
      paid_at timestamptz,
      voided_at timestamptz,
      overdue_at timestamptz,
      period_start timestamptz,
      period_end timestamptz,
      content_version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index invoices_customer on invoices (customer_id, created_at);
    create index invoices_status on invoices (status, created_at);
    create index invoices_created on invoices (created_at, id);
    create index invoices_subscription on invoices (subscription_id) where subscription_id is not null;
    -- D-82: at most one invoice per subscription period.
    create unique index invoices_subscription_period on invoices (subscription_id, period_start)
      where subscription_id is not null and period_start is not null;
    create index invoices_due on invoices (due_date) where status = 'issued';

    create table invoice_line_items (
      id uuid primary key default gen_random_uuid(),
      invoice_id uuid not null references invoices(id) on delete cascade,
      position integer not null,
      description text not null,
      quantity integer not null check (quantity >= 1),
      unit_price numeric not null,
      amount numeric not null,
      unique (invoice_id, position)
    );

    create table invoice_pdfs (
      invoice_id uuid not null references invoices(id) on delete cascade,
      content_version integer not null,
      pdf bytea not null,
      rendered_at timestamptz not null default now(),
      primary key (invoice_id, content_version)
    );

    create table payments (
      id uuid primary key default gen_random_uuid(),
      invoice_id uuid not null references invoices(id) on delete restrict,
      customer_id uuid not null references customers(id) on delete restrict,
      amount numeric not null check (amount > 0),
      currency char(3) not null,
      payment_method text not null,
      provider_reference text,
      status text not null default 'succeeded' check (status in ('succeeded', 'partially_refunded', 'refunded')),
      refunded_amount numeric not null default 0,
      created_at timestamptz not null default now()
    );
    create unique index payments_provider_reference on payments (payment_method, provider_reference)
      where provider_reference is not null;
    create index payments_invoice on payments (invoice_id);
    create index payments_customer on payments (customer_id, created_at);
    create index payments_created on payments (created_at, id);

    create table refunds (
      id uuid primary key default gen_random_uuid(),
      payment_id uuid not null references payments(id) on delete restrict,
      amount numeric not null check (amount > 0),
      reason text,
      status text not null default 'succeeded',
      provider_refund_id text,
      created_at timestamptz not null default now()
    );
    create index refunds_payment on refunds (payment_id);
    create index refunds_created on refunds (created_at, id);

    create table credit_notes (
      id uuid primary key default gen_random_uuid(),
      number text not null unique,
      invoice_id uuid not null references invoices(id) on delete restrict,
      customer_id uuid not null references customers(id) on delete restrict,
      amount numeric not null check (amount > 0),
      currency char(3) not null,
      reason text,
      created_at timestamptz not null default now()
    );
    create index credit_notes_invoice on credit_notes (invoice_id);
    create index credit_notes_created on credit_notes (created_at, id);

    -- The store-credit ledger (D-57): the balance is the sum of entries, never a number kept alone.
    create table credit_ledger (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id) on delete restrict,
      currency char(3) not null,
      amount numeric not null check (amount <> 0),
      kind text not null check (kind in ('credit', 'application', 'credit_note', 'proration')),
      description text,
      invoice_id uuid references invoices(id) on delete restrict,
      credit_note_id uuid references credit_notes(id) on delete restrict,
      created_at timestamptz not null default now()
    );
    create index credit_ledger_customer on credit_ledger (customer_id, currency);
    create index credit_ledger_created on credit_ledger (created_at, id);

    create table payment_methods (
      id uuid primary key default gen_random_uuid(),
      customer_id uuid not null references customers(id) on delete cascade,
      type text not null,
      provider_method_id text not null,
      is_default boolean not null default false,
      created_at timestamptz not null default now(),
      unique (customer_id, type, provider_method_id)
    );
    create unique index payment_methods_one_default on payment_methods (customer_id) where is_default;
    create index payment_methods_created on payment_methods (created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists payment_methods, credit_ledger, credit_notes, refunds, payments, invoice_pdfs,
    invoice_line_items, invoices, document_counters cascade`);
}
