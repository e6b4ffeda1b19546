import type { Knex } from 'knex';

/**
 * Issue 32: an email's foreign key to its customer is checked when the email is written, no longer at commit. Invoice
 * issuing queues its emails before it takes the year's invoice counter (invoices/issue.ts), so the check now runs
 * before the counter is locked instead of in the commit that every other issuing waits for (a renewal batch's 500
 * checks). An invoice for an unknown customer is still refused as customer_not_found: invoices/service.ts reads this
 * key's refusal as it reads the invoice's own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table emails alter constraint emails_customer_id_fkey not deferrable`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table emails alter constraint emails_customer_id_fkey deferrable initially deferred`);
}
