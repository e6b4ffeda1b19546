import type { Knex } from 'knex';

// The console's licenses list (issue 18) searches by the beginning of a key (`q`). The unique index on
// license_key compares by the database's collation, which a `like 'PREFIX%'` cannot use unless the
// collation is C; text_pattern_ops compares byte-wise, so the prefix is an index range whatever the locale.
// Its `status` filter pages newest first: the rare statuses (suspended, revoked, stored expired) would
// otherwise be found by walking every license from the newest.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index licenses_key_prefix on licenses (license_key text_pattern_ops);
    create index licenses_status_created on licenses (status, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists licenses_status_created, licenses_key_prefix');
}
