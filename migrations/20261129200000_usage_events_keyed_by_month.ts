import type { Knex } from 'knex';

/**
 * Issue 35's ingestion aim: one table is both the event store and the dedup key store. `usage_events` is
 * partitioned by the month of the event's timestamp (a `month` column, U-15) and its primary key
 * (customer_id, transaction_id, month) is what makes a retry a duplicate; the separate `usage_event_keys` insert
 * (a heap row and a unique index entry per event, 7 of the statement's 14.5 ms per 1,000 events) is gone. What the
 * key no longer sees, a transactionId reused with a timestamp in another month, is written up in docs/decisions.md.
 * `usage_event_keys` stays as a view of the events' keys, so that test clocks' deletion
 * (src/test-clocks/delete-repo.ts, another issue's code) still runs as written.
 */
/** Renames the partitions of `parent` with `suffix`, freeing their names for the partitions of a new table. */
async function renamePartitions(knex: Knex, parent: string, suffix: string): Promise<void> {
  const { rows } = await knex.raw(
    'select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass',
    [parent],
  );
  for (const { relname } of rows as { relname: string }[])
    await knex.raw('alter table ?? rename to ??', [relname, `${relname}${suffix}`]);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table usage_events rename to usage_events_by_timestamp;
    -- transactionIds are opaque: compared byte-wise ("C"), the key's and the batch's sort comparisons are a memcmp
    -- instead of the database collation's (C.UTF-8 under libc is not PostgreSQL's C fast path).
    create table usage_events (
      customer_id uuid not null,
      transaction_id text collate "C" not null,
      month date not null,
      "timestamp" timestamptz not null,
      content_hash text not null,
      metric_id uuid not null,
      subscription_id uuid not null,
      charge_id uuid not null,
      period_start timestamptz not null,
      value text,
      properties jsonb,
      seq bigint not null default nextval('usage_event_seq'),
      received_at timestamptz not null default now(),
      primary key (customer_id, transaction_id, month)
    ) partition by range (month);

    create or replace function usage_events_partition_for(at timestamptz) returns void language plpgsql as $fn$
    declare
      month_start date := date_trunc('month', at at time zone 'UTC')::date;
      name text := 'usage_events_' || to_char(month_start, 'YYYY_MM');
    begin
      if to_regclass(name) is null then
        execute format(
          'create table if not exists %I partition of usage_events for values from (%L) to (%L)',
          name, month_start, (month_start + interval '1 month')::date);
      end if;
    end $fn$;
  `);
  // The old partitions hold the names the new ones take: renamed with their parent first.
  await renamePartitions(knex, 'usage_events_by_timestamp', '_old');
  await knex.raw(`
    select usage_events_partition_for(m)
      from generate_series('2025-01-01'::timestamptz, '2028-12-01'::timestamptz, interval '1 month') m;
    select usage_events_partition_for(min("timestamp")) from usage_events_by_timestamp
      group by date_trunc('month', "timestamp" at time zone 'UTC');
    insert into usage_events (customer_id, transaction_id, month, "timestamp", content_hash, metric_id,
      subscription_id, charge_id, period_start, value, properties, seq, received_at)
    select e.customer_id, e.transaction_id, date_trunc('month', e."timestamp" at time zone 'UTC')::date, e."timestamp",
      k.content_hash, e.metric_id, e.subscription_id, e.charge_id, e.period_start, e.value, e.properties, e.seq,
      e.received_at
    from usage_events_by_timestamp e join usage_event_keys k using (customer_id, transaction_id);
    drop table usage_events_by_timestamp, usage_event_keys;
    create view usage_event_keys as
      select customer_id, transaction_id, content_hash, "timestamp" as event_timestamp from usage_events;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop view usage_event_keys;
    create table usage_event_keys (
      customer_id uuid not null,
      transaction_id text not null,
      content_hash text not null,
      event_timestamp timestamptz not null,
      primary key (customer_id, transaction_id)
    );
    insert into usage_event_keys select distinct on (customer_id, transaction_id) customer_id, transaction_id,
      content_hash, "timestamp" from usage_events order by customer_id, transaction_id, month;
    alter table usage_events rename to usage_events_by_month;
    create table usage_events (
      customer_id uuid not null,
      transaction_id text not null,
      "timestamp" timestamptz not null,
      metric_id uuid not null,
      subscription_id uuid not null,
      charge_id uuid not null,
      period_start timestamptz not null,
      value text,
      properties jsonb,
      seq bigint not null default nextval('usage_event_seq'),
      received_at timestamptz not null default now(),
      primary key (customer_id, transaction_id, "timestamp")
    ) partition by range ("timestamp");
  `);
  await renamePartitions(knex, 'usage_events_by_month', '_new');
  await knex.raw(`
    create or replace function usage_events_partition_for(at timestamptz) returns void language plpgsql as $fn$
    declare
      month_start timestamptz := date_trunc('month', at at time zone 'UTC') at time zone 'UTC';
      name text := 'usage_events_' || to_char(month_start at time zone 'UTC', 'YYYY_MM');
    begin
      if to_regclass(name) is null then
        execute format(
          'create table if not exists %I partition of usage_events for values from (%L) to (%L)',
          name, month_start, month_start + interval '1 month');
      end if;
    end $fn$;
    select usage_events_partition_for(m)
      from generate_series('2025-01-01'::timestamptz, '2028-12-01'::timestamptz, interval '1 month') m;
    select usage_events_partition_for(m) from (select distinct month::timestamptz m from usage_events_by_month) t;
    insert into usage_events select customer_id, transaction_id, "timestamp", metric_id, subscription_id, charge_id,
      period_start, value, properties, seq, received_at from usage_events_by_month;
    drop table usage_events_by_month;
  `);
}
