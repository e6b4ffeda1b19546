import type { Knex } from 'knex';

// The console's invoice and payment lists (C-9: 100k invoices) page newest first by the keyset (created_at, id)
// under a filter: each filter's index ends in that keyset, so a page is one index range read backwards with no
// sort. The customer and status indexes replace the ones without `id`, which they cover. An invoice's page lists
// the events whose data names it: an expression index on data->>'invoiceId'.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index invoices_status_created on invoices (status, created_at, id);
    create index invoices_customer_created on invoices (customer_id, created_at, id);
    drop index invoices_status;
    drop index invoices_customer;

    create index payments_status_created on payments (status, created_at, id);
    create index payments_customer_created on payments (customer_id, created_at, id);
    drop index payments_customer;

    create index events_invoice_id on events ((data->>'invoiceId'), created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index events_invoice_id;
    create index payments_customer on payments (customer_id, created_at);
    drop index payments_customer_created;
    drop index payments_status_created;
    create index invoices_customer on invoices (customer_id, created_at);
    create index invoices_status on invoices (status, created_at);
    drop index invoices_customer_created;
    drop index invoices_status_created;
  `);
}
