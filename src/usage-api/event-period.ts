import type { Db } from '../db/knex.ts';
import { chargesById, type ChargeWithMetric } from '../metering/charges.ts';
import { periodBounds } from '../subscriptions/periods.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { billedSpansOf } from '../usage/service.ts';

export interface Period {
  start: Date;
  end: Date;
}

/** Where an event counts: the charge in effect at its timestamp and the period (or billed span) it falls in. */
export interface Placement {
  chargeId: string;
  period: Period;
}

interface Span extends Period {
  chargeId: string;
  metricId: string;
}

/** The billed spans of each subscription a batch touches, read once per batch. */
export type SpanMemo = Map<string, Promise<Span[]>>;

async function spansOf(db: Db, sub: SubscriptionRow, memo: SpanMemo): Promise<Span[]> {
  let spans = memo.get(sub.id);
  if (!spans) {
    spans = (async () => {
      const rows = await billedSpansOf(db, sub.customer_id, sub.id);
      const charges = await chargesById(db, [...new Set(rows.map((r) => r.charge_id))]);
      return rows.map((r) => ({
        chargeId: r.charge_id,
        metricId: charges.get(r.charge_id)!.metric_id,
        start: r.period_start,
        end: r.period_end,
      }));
    })();
    memo.set(sub.id, spans);
  }
  return spans;
}

/**
 * Where an event of `metricId` at `at` counts for `sub` (whose plan's charges are `charges`), or null when no charge
 * of the subscription counted that metric then:
 * - in the current period, under the plan's charge; in the next one when the sweep has not renewed yet (an event
 *   at most 5 minutes ahead);
 * - in a span billed already (a closed period, or the period up to a plan change, U-10), under the charge that
 *   billed it then: the next invoice carries the difference as an adjustment (U-12), priced as that
 *   charge was, never as the plan the subscription has moved to.
 * Only an event with its own timestamp (`dated`) can fall before a plan change; one stamped on arrival cannot, so it
 * costs no read of the spans.
 */
export async function placeEvent(
  db: Db,
  sub: SubscriptionRow,
  charges: ChargeWithMetric[],
  event: { metricId: string; at: Date; dated: boolean },
  memo: SpanMemo,
): Promise<Placement | null> {
  const t = event.at.getTime();
  const charge = charges.find((c) => c.metric_id === event.metricId);
  const current = { start: sub.current_period_start, end: sub.current_period_end };
  if (t >= current.end.getTime()) {
    const next = periodBounds(sub.billing_anchor, sub.billing_cycle, sub.period_number + 1);
    const inNext = next.start.getTime() === current.end.getTime() && t < next.end.getTime();
    return charge && inNext ? { chargeId: charge.id, period: next } : null;
  }
  if (event.dated || t < current.start.getTime()) {
    const billed = (await spansOf(db, sub, memo)).filter((s) => s.start.getTime() <= t && t < s.end.getTime());
    if (billed.length > 0) {
      // Plans changed within a period bill spans from its start to each change: the earliest ending was in effect.
      const end = Math.min(...billed.map((s) => s.end.getTime()));
      const span = billed.find((s) => s.end.getTime() === end && s.metricId === event.metricId);
      return span ? { chargeId: span.chargeId, period: { start: span.start, end: span.end } } : null;
    }
    if (t < current.start.getTime()) return null;
  }
  return charge ? { chargeId: charge.id, period: current } : null;
}
