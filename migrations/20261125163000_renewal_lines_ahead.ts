import type { Knex } from 'knex';

/**
 * An invoice line's foreign key to its invoice is checked at commit (deferred), as a webhook delivery's to its event
 * already is (20261125143000_renewal_row_costs): the sweep writes a batch's lines before its invoices take their
 * numbers (issue 20, docs/decisions.md "Renewal sweep: the last statement"), with the invoice ids chosen when the
 * batch is planned, so the statement that holds the year's invoice counter writes only what shows a number. A line
 * still cannot commit without its invoice; `on delete cascade` is unchanged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `alter table invoice_line_items alter constraint invoice_line_items_invoice_id_fkey deferrable initially deferred`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table invoice_line_items alter constraint invoice_line_items_invoice_id_fkey not deferrable`);
}
