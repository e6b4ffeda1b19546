import { customerScopeSql, type CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import type { SubscriptionRow } from './repo.ts';

export type ReminderCandidate = Pick<
  SubscriptionRow,
  'id' | 'customer_id' | 'plan_id' | 'trial_end' | 'current_period_end' | 'billing_cycle'
>;

/** Which subscriptions a reminder batch looks at: a date in (asOf, until], after `afterId` in id order, of `scope`. */
export interface ReminderWindow {
  asOf: Date;
  until: Date;
  afterId: string;
  limit: number;
  scope: CustomerScope;
}

const COLUMNS = ['id', 'customer_id', 'plan_id', 'trial_end', 'current_period_end', 'billing_cycle'];

function dueIn(db: Db, window: ReminderWindow, dateColumn: 'trial_end' | 'current_period_end') {
  const inScope = customerScopeSql(window.scope, 'subscriptions.customer_id');
  return db('subscriptions')
    .select(COLUMNS)
    .whereRaw(inScope.sql, inScope.bindings)
    .where(dateColumn, '>', window.asOf)
    .where(dateColumn, '<=', window.until)
    .where('id', '>', window.afterId)
    .orderBy('id')
    .limit(window.limit);
}

/** Trialing subscriptions whose trial ends in the window. */
export function trialsEndingBetween(db: Db, window: ReminderWindow) {
  return dueIn(db, window, 'trial_end').where({ status: 'trialing' }) as Promise<ReminderCandidate[]>;
}

/** Active yearly subscriptions that renew in the window and are not set to end then. */
export function yearlyRenewalsBetween(db: Db, window: ReminderWindow) {
  return dueIn(db, window, 'current_period_end').where({
    status: 'active',
    billing_cycle: 'yearly',
    cancel_at_period_end: false,
  }) as Promise<ReminderCandidate[]>;
}
