import type { Knex } from 'knex';

/**
 * A paused subscription whose cancellation is scheduled is canceled at its period end like any other (D-44:
 * "cancelAtPeriodEnd: true keeps the status; at period end the lifecycle job cancels"), so the sweep's claim now
 * takes it too (subscriptions/renewal-repo.ts DUE_CONDITION), and the index it claims by holds those rows: a paused
 * subscription without the flag stays out of it, as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index subscriptions_due_order_next on subscriptions (current_period_end, id)
      where status in ('active', 'trialing', 'past_due') or (status = 'paused' and cancel_at_period_end);
    drop index subscriptions_due_order;
    alter index subscriptions_due_order_next rename to subscriptions_due_order;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index subscriptions_due_order_prev on subscriptions (current_period_end, id) where status in ('active',
      'trialing', 'past_due');
    drop index subscriptions_due_order;
    alter index subscriptions_due_order_prev rename to subscriptions_due_order;
  `);
}
