import type { Knex } from 'knex';

/**
 * Issue 32 (the million-renewal sweep): fewer and cheaper index writes per issued invoice.
 * - An email's Message-ID is the column's default, a UUIDv7: the unique index on it is appended to at its right edge
 *   instead of written at a random page (random v4 ids made in Node before), which costs most once it outgrows memory.
 * - Invoice numbers compare byte-wise (collation "C"): they are ASCII (`INV-2026-0001`), so every order and equality
 *   is the same as before, and the unique index now also serves C-15's search by a number's beginning (`like
 *   'INV-2026-00%'`), which needed a second index (text_pattern_ops) that every invoice insert maintained.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table emails alter column message_id set default uuidv7()::text;
    alter table invoices alter column invoice_number type text collate "C";
    drop index invoices_number_prefix;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index invoices_number_prefix on invoices (invoice_number text_pattern_ops);
    alter table invoices alter column invoice_number type text collate "default";
    alter table emails alter column message_id drop default;
  `);
}
