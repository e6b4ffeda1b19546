import type { Knex } from 'knex';

// Shared rate limits (issue 20): one row per limited key (e.g. `licenses.public:<ip>`) holding its current fixed
// window, so every web process counts against the same limit. Processes lease tokens from it in chunks and spend
// them in memory (src/http/rate-limit.ts), so a row is written once per chunk, not per request.
// UNLOGGED: the rows live for a minute and are rewritten constantly; writing them to the WAL would cost the hot
// path for nothing worth keeping. After a crash of PostgreSQL (or on a promoted replica, which never has them)
// the table starts empty: the current windows restart, which admits at most one extra window's worth once.
// `window_end_ms` is epoch milliseconds of the web processes' clocks (the window opener's), `granted` the size of
// the last lease (what the statement answers).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create unlogged table rate_limit_windows (
      key text primary key,
      window_end_ms bigint not null,
      used integer not null,
      granted integer not null
    );
    create index rate_limit_windows_end on rate_limit_windows (window_end_ms);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists rate_limit_windows');
}
