import type { Knex } from 'knex';

/**
 * Issue 35 (usage-based pricing, U-1..U-15): billable metrics, charges on plans, usage events (partitioned by month
 * of their timestamp), the running aggregate a usage read answers from, the distinct values `unique_count` counts,
 * and what each period's usage was billed at (for late-event adjustments). Every unique key of the usage tables leads
 * with the customer's id (U-15: distributable by customer).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table billable_metrics (
      id uuid primary key default uuidv7(),
      code text not null,
      name text not null,
      description text,
      aggregation text not null check (aggregation in ('count', 'sum', 'max', 'unique_count', 'latest')),
      field text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint billable_metrics_code_key unique (code),
      constraint billable_metrics_field check ((aggregation = 'count') = (field is null))
    );
    create index billable_metrics_created on billable_metrics (created_at, id);

    alter table plans drop constraint plans_pricing_model_check;
    alter table plans add constraint plans_pricing_model_check check (pricing_model in ('flat', 'usage', 'hybrid'));

    create table plan_charges (
      id uuid primary key default uuidv7(),
      plan_id uuid not null references plans(id) on delete cascade,
      metric_id uuid not null references billable_metrics(id) on delete restrict,
      position integer not null,
      model text not null check (model in ('per_unit', 'package', 'graduated', 'volume')),
      unit_price numeric check (unit_price >= 0),
      free_units numeric check (free_units >= 0),
      package_size integer check (package_size >= 1),
      package_price numeric check (package_price >= 0),
      tiers jsonb,
      created_at timestamptz not null default now(),
      unique (plan_id, metric_id)
    );
    create index plan_charges_metric on plan_charges (metric_id);

    alter table invoice_line_items add column usage jsonb;

    -- One row per (customer, transactionId) ever accepted: the key that makes retries duplicates (U-6).
    create table usage_event_keys (
      customer_id uuid not null,
      transaction_id text not null,
      content_hash text not null,
      event_timestamp timestamptz not null,
      primary key (customer_id, transaction_id)
    );

    create sequence usage_event_seq;
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

    -- The month partition holding \`at\`, created when missing (ahead by the release step and on first use).
    create function usage_events_partition_for(at timestamptz) returns void language plpgsql as $fn$
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

    -- The running aggregate per (subscription, charge, period), kept in the ingesting transaction (U-7, U-9).
    create table usage_aggregates (
      customer_id uuid not null,
      subscription_id uuid not null,
      charge_id uuid not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      aggregation text not null,
      quantity numeric not null,
      events bigint not null,
      latest_at timestamptz,
      latest_seq bigint,
      updated_at timestamptz not null default now(),
      primary key (customer_id, subscription_id, charge_id, period_start)
    );
    create index usage_aggregates_subscription on usage_aggregates (subscription_id, period_start);

    -- The distinct values a unique_count charge has seen in a period (exact, U-1).
    create table usage_unique_values (
      customer_id uuid not null,
      subscription_id uuid not null,
      charge_id uuid not null,
      period_start timestamptz not null,
      value text not null,
      primary key (customer_id, subscription_id, charge_id, period_start, value)
    );

    -- What a period's usage of a charge has been billed at so far (U-10..U-12).
    create table usage_billings (
      customer_id uuid not null,
      subscription_id uuid not null,
      charge_id uuid not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      quantity numeric not null,
      amount numeric not null,
      trial boolean not null default false,
      invoice_id uuid not null,
      updated_at timestamptz not null default now(),
      primary key (customer_id, subscription_id, charge_id, period_start)
    );
    create index usage_billings_subscription on usage_billings (subscription_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table usage_billings, usage_unique_values, usage_aggregates, usage_events, usage_event_keys, plan_charges,
      billable_metrics;
    drop sequence usage_event_seq;
    drop function usage_events_partition_for(timestamptz);
    alter table invoice_line_items drop column usage;
    alter table plans drop constraint plans_pricing_model_check;
    alter table plans add constraint plans_pricing_model_check check (pricing_model in ('flat'));
  `);
}
