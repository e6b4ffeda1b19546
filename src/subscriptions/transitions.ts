/**
 * The subscription state machine (D-44): the one place a subscription's status changes. Every writer
 * (PUT, plan restarts, renewals, dunning, provider events) moves it through here, so the side fields of
 * a move (canceled_at, paused_at, cancel_at_period_end) and its event are the same whoever moves it.
 */
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { recordEvents } from '../events/service.ts';
import {
  updateSubscriptionRow,
  type SubscriptionChanges,
  type SubscriptionRow,
  type SubscriptionStatus,
} from './repo.ts';
import { serialiseSubscription } from './schema.ts';

export type SubscriptionEventType = 'subscription.created' | 'subscription.updated' | 'subscription.canceled';

/**
 * The moves allowed from each status. Canceled is final (interface.md); between the others every move is
 * allowed, since payment providers report the status they bill by (a provider may put a subscription back
 * on trial, D-62). Staying in the same status is not a move.
 */
const ALLOWED: Record<SubscriptionStatus, readonly SubscriptionStatus[]> = {
  trialing: ['active', 'past_due', 'paused', 'canceled'],
  active: ['trialing', 'past_due', 'paused', 'canceled'],
  past_due: ['active', 'trialing', 'paused', 'canceled'],
  paused: ['active', 'trialing', 'past_due', 'canceled'],
  canceled: [],
};

/**
 * What moving `sub` to `to` at `at` changes, without touching the database (the sweep's renewals plan many
 * moves in memory): the status and its side fields. Refuses a move out of canceled, or any move the table
 * above does not allow, with a coded error.
 */
export function transitionChanges(
  sub: Pick<SubscriptionRow, 'status'>,
  to: SubscriptionStatus,
  at: Date,
): SubscriptionChanges {
  if (sub.status === 'canceled') throw new AppError('subscription_canceled', 'A canceled subscription cannot change');
  if (!ALLOWED[sub.status].includes(to))
    throw new AppError('invalid_status_transition', `A subscription cannot go from ${sub.status} to ${to}`);
  const changes: SubscriptionChanges = { status: to };
  if (to === 'canceled') Object.assign(changes, { canceled_at: at, cancel_at_period_end: false });
  if (to === 'paused') changes.paused_at = at;
  else if (sub.status === 'paused') changes.paused_at = null;
  return changes;
}

/** The event a move to `to` records. */
export const transitionEventType = (to: SubscriptionStatus): SubscriptionEventType =>
  to === 'canceled' ? 'subscription.canceled' : 'subscription.updated';

/** A subscription.* event of `sub`, to record (recordEvents). */
export const subscriptionEvent = (type: SubscriptionEventType, sub: SubscriptionRow) => ({
  type,
  data: serialiseSubscription(sub),
});

/**
 * Moves a subscription the caller has locked to `to` at `at`, with `extra` changes of the same write (a
 * restarted period, a cleared flag), and records subscription.updated or subscription.canceled.
 */
export async function transitionSubscription(
  trx: Db,
  sub: SubscriptionRow,
  to: SubscriptionStatus,
  at: Date,
  extra: SubscriptionChanges = {},
): Promise<SubscriptionRow> {
  const moved = await updateSubscriptionRow(trx, sub.id, { ...extra, ...transitionChanges(sub, to, at) });
  await recordEvents(trx, [subscriptionEvent(transitionEventType(to), moved)]);
  return moved;
}
