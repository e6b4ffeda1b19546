import type { Knex } from 'knex';

/**
 * Index entries every renewal pays for and no query needs (issue 20, docs/decisions.md "Renewal sweep"):
 * - `subscriptions_due (current_period_end)` has the predicate of `subscriptions_due_order (current_period_end,
 *   id)` and is its prefix: the latter answers every query the former did, and a renewal moves
 *   current_period_end, so each renewal wrote both.
 * - `webhook_deliveries`: the unique (endpoint_id, event_id) is kept as (event_id, endpoint_id), which also
 *   answers the lookups by event (`webhook_deliveries_event`, dropped) and the fan-out's ON CONFLICT.
 * - `audit_log_actor_email` held an entry for every row; only users' rows have an email (the sweep's `system`
 *   rows and API keys' have none), and the `?actor=` filter by email is a strict comparison, so null rows
 *   never match it: partial on `actor_email is not null`.
 * - `invoices_subscription (subscription_id)` and the unique `invoices_subscription_period (subscription_id,
 *   period_start)` (D-82) become one unique index on (subscription_id, period_start) where subscription_id is not
 *   null: invoices without a period (null period_start) never conflict in it (nulls are distinct), so it refuses
 *   exactly what the old one did, and it answers the lookups by subscription the other served.
 * - A delivery's foreign key to its event is checked at commit (deferred): the sweep writes a batch's
 *   deliveries before taking the invoice numbering lock and their events after (events/service.ts
 *   fanOutAhead); a delivery still cannot commit without its event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists subscriptions_due;

    create unique index invoices_subscription_periods on invoices (subscription_id, period_start)
      where subscription_id is not null;
    drop index if exists invoices_subscription_period;
    drop index if exists invoices_subscription;

    create unique index webhook_deliveries_event_endpoint on webhook_deliveries (event_id, endpoint_id);
    alter table webhook_deliveries add constraint webhook_deliveries_event_endpoint_key unique using index
      webhook_deliveries_event_endpoint;
    alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_event_id_key;
    drop index if exists webhook_deliveries_event;
    alter table webhook_deliveries alter constraint webhook_deliveries_event_id_fkey deferrable initially deferred;

    create index audit_log_user_email on audit_log (lower(actor_email), created_at, id) where actor_email is not null;
    drop index if exists audit_log_actor_email;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index audit_log_actor_email on audit_log (lower(actor_email), created_at, id);
    drop index if exists audit_log_user_email;

    alter table webhook_deliveries alter constraint webhook_deliveries_event_id_fkey not deferrable;
    create index webhook_deliveries_event on webhook_deliveries (event_id);
    alter table webhook_deliveries add constraint webhook_deliveries_endpoint_id_event_id_key unique (endpoint_id,
      event_id);
    alter table webhook_deliveries drop constraint webhook_deliveries_event_endpoint_key;

    create unique index invoices_subscription_period on invoices (subscription_id, period_start)
      where subscription_id is not null and period_start is not null;
    create index invoices_subscription on invoices (subscription_id) where subscription_id is not null;
    drop index if exists invoices_subscription_periods;

    create index subscriptions_due on subscriptions (current_period_end) where status in ('active', 'trialing',
      'past_due');
  `);
}
