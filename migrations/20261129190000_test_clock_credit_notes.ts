import type { Knex } from 'knex';

/**
 * Issue 39: a test clock's customers' credit notes are numbered by their own counter kind `TCN`, as their invoices
 * are `TST`, so deleting a clock (and its credit notes) leaves the real `CN` sequence gapless (D-58).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table document_counters drop constraint document_counters_kind_check;
    alter table document_counters add constraint document_counters_kind_check
      check (kind in ('INV', 'CN', 'TST', 'TCN'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    delete from document_counters where kind = 'TCN';
    alter table document_counters drop constraint document_counters_kind_check;
    alter table document_counters add constraint document_counters_kind_check check (kind in ('INV', 'CN', 'TST'));
  `);
}
