import type { Knex } from 'knex';

// The daily lifecycle sweep (D-80..D-82). One row per sweep run; the partial unique index admits one
// open (queued or running) run at a time, so concurrent cron calls race on the index, not in code:
// the loser's insert does nothing and it joins the open run. `as_of` is fixed when the run first starts,
// so a run killed half-way and resumed sweeps as of the same instant. `heartbeat_at` moves after every
// batch: a running run whose heartbeat is long stale was abandoned by a dead process.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table lifecycle_runs (
      id uuid primary key default gen_random_uuid(),
      status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
      -- the pg-boss job that runs it; null when a process runs it in-process (npm run lifecycle)
      job_id uuid,
      as_of timestamptz,
      summary jsonb,
      error text,
      attempts integer not null default 0,
      created_at timestamptz not null default clock_timestamp(),
      started_at timestamptz,
      heartbeat_at timestamptz,
      finished_at timestamptz
    );
    create unique index lifecycle_runs_one_open on lifecycle_runs ((true)) where status in ('queued', 'running');
    create index lifecycle_runs_created on lifecycle_runs (created_at, id);

    -- The sweep claims due subscriptions in (period end, id) order, batch after batch: an index in that order
    -- answers each claim without sorting everything still due.
    create index subscriptions_due_order on subscriptions (current_period_end, id) where status in ('active',
      'trialing', 'past_due');

    -- D-22 health score: failed payments of a customer in the last 90 days, read per customer.
    create index events_payment_failed_customer on events ((data->>'customerId'), created_at)
      where type = 'payment.failed';
    -- D-22 health score and the overdue sweep read invoices by customer and status.
    create index invoices_customer_overdue on invoices (customer_id) where status = 'overdue';
    create index subscriptions_customer_past_due on subscriptions (customer_id) where status = 'past_due';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists subscriptions_customer_past_due;
    drop index if exists subscriptions_due_order;
    drop index if exists invoices_customer_overdue;
    drop index if exists events_payment_failed_customer;
    drop table if exists lifecycle_runs;
  `);
}
