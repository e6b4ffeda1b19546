import type { Knex } from 'knex';

/**
 * Issue 33: an identity-provider user is the provider's `sub` (stable, never reassigned within an issuer), not an
 * email claim. Existing idp rows have none yet: their next login links them by a verified email (auth/idp-users.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table users add column idp_issuer text, add column idp_subject text,
      add constraint users_idp_identity_whole check ((idp_issuer is null) = (idp_subject is null));
    create unique index users_idp_identity on users (idp_issuer, idp_subject) where idp_subject is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table users drop column idp_issuer, drop column idp_subject');
}
