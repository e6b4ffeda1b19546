import { customerScopeSql, type CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import type { SubscriptionRow } from './repo.ts';

export type ReminderCandidate = Pick<
  SubscriptionRow,
  'id' | 'customer_id' | 'plan_id' | 'trial_end' | 'current_period_end' | 'billing_cycle'
>;

const COLUMNS = ['id', 'customer_id', 'plan_id', 'trial_end', 'current_period_end', 'billing_cycle'];

/** Trialing subscriptions whose trial ends in (asOf, until], after `afterId`, in id order. */
export function trialsEndingBetween(
  db: Db,
  asOf: Date,
  until: Date,
  afterId: string,
  limit: number,
  scope: CustomerScope,
) {
  const inScope = customerScopeSql(scope, 'subscriptions.customer_id');
  return db('subscriptions')
    .select(COLUMNS)
    .whereRaw(inScope.sql, inScope.bindings)
    .where({ status: 'trialing' })
    .where('trial_end', '>', asOf)
    .where('trial_end', '<=', until)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit) as Promise<ReminderCandidate[]>;
}

/** Active yearly subscriptions that renew in (asOf, until] and are not set to end then, after `afterId`, by id. */
export function yearlyRenewalsBetween(
  db: Db,
  asOf: Date,
  until: Date,
  afterId: string,
  limit: number,
  scope: CustomerScope,
) {
  const inScope = customerScopeSql(scope, 'subscriptions.customer_id');
  return db('subscriptions')
    .select(COLUMNS)
    .whereRaw(inScope.sql, inScope.bindings)
    .where({ status: 'active', billing_cycle: 'yearly', cancel_at_period_end: false })
    .where('current_period_end', '>', asOf)
    .where('current_period_end', '<=', until)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit) as Promise<ReminderCandidate[]>;
}
