import type { Db } from '../db/knex.ts';
import { periodBounds } from '../subscriptions/periods.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { billedPeriodsOf } from '../usage/service.ts';

export interface Period {
  start: Date;
  end: Date;
}

/**
 * The billing period of a subscription an event's timestamp falls in: the current one; the next one (the sweep has
 * not renewed yet, the event is at most 5 minutes ahead); or a closed one whose usage was billed already (a late
 * event, U-12). Null when none (before the subscription's charges existed). `closed` memoises the closed periods of
 * a subscription for one batch.
 */
export async function periodOfEvent(
  db: Db,
  sub: SubscriptionRow,
  at: Date,
  closed: Map<string, Promise<Period[]>>,
): Promise<Period | null> {
  const t = at.getTime();
  const current = { start: sub.current_period_start, end: sub.current_period_end };
  if (t >= current.start.getTime() && t < current.end.getTime()) return current;
  if (t >= current.end.getTime()) {
    const next = periodBounds(sub.billing_anchor, sub.billing_cycle, sub.period_number + 1);
    return next.start.getTime() === current.end.getTime() && t < next.end.getTime() ? next : null;
  }
  let periods = closed.get(sub.id);
  if (!periods) {
    periods = billedPeriodsOf(db, sub.customer_id, sub.id);
    closed.set(sub.id, periods);
  }
  return (await periods).find((p) => p.start.getTime() <= t && t < p.end.getTime()) ?? null;
}
