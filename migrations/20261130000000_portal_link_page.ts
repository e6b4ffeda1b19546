import type { Knex } from 'knex';

/**
 * Issue 37's deep links: a portal link may open a page of the portal other than the overview (its `path`, e.g. one
 * subscription); null opens `/portal` as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table portal_links add column path text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table portal_links drop column path`);
}
