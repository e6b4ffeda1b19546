import type { Knex } from 'knex';

// A pending charge attempt whose invoice was settled another way before the attempt was (re-)sent is closed as
// `canceled` instead of being sent: sending it could charge a second time (see src/dunning/charge.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table charge_attempts drop constraint charge_attempts_status_check;
    alter table charge_attempts add constraint charge_attempts_status_check
      check (status in ('pending', 'succeeded', 'declined', 'canceled'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    update charge_attempts set status = 'declined' where status = 'canceled';
    alter table charge_attempts drop constraint charge_attempts_status_check;
    alter table charge_attempts add constraint charge_attempts_status_check check (status in ('pending', 'succeeded',
      'declined'));
  `);
}
