import type { Knex } from 'knex';

/**
 * A login attempt is recorded before its password is checked (D-16, issue 20) and is `pending` until it
 * turns out a failure: only failures refuse logins; pending ones make later attempts wait their turn.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table login_failures add column pending boolean not null default false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table login_failures drop column pending');
}
