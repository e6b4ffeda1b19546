/**
 * Recording usage (U-5..U-8): events that passed every check are stored (each row its own dedup key), and the
 * running aggregate of each (subscription, charge, period) moves in the same transaction, so the next read counts
 * them (U-7) without scanning events. The callers (usage-api/) check the events; this module knows no HTTP and no
 * subscription table.
 */
import type { Db } from '../db/knex.ts';
import type { MetricRow } from '../metering/service.ts';
import { type EventGroup, type EventInsert, eventKey, findEventKeys, keyMonth, storeEvents } from './events-repo.ts';
import { billedPeriods, billedSpans, ensurePartitions, eventsOfSubscription, type UsageEventRow } from './repo.ts';

export { eventKey };

/** An event ready to store: checked, its subscription, charge and period resolved. */
export interface UsageEvent {
  customerId: string;
  transactionId: string;
  contentHash: string;
  timestamp: Date;
  metric: MetricRow;
  subscriptionId: string;
  chargeId: string;
  period: { start: Date; end: Date };
  /** The metric's field as a decimal string (a string for unique_count); null for count. */
  value: string | null;
  properties: Record<string, unknown> | undefined;
  /** Whether the sender gave the timestamp (else it is when the event was received). */
  dated: boolean;
}

const partitionsKnown = new Set<number>();
const monthOf = (d: Date) => d.getUTCFullYear() * 12 + d.getUTCMonth();

/**
 * The month partitions these events need. Created ahead by the migration and on first use here: DDL on the parent
 * table, so it runs before (and outside) the ingesting transaction, once per month per process.
 */
export async function preparePartitions(db: Db, timestamps: Date[]): Promise<void> {
  const missing = new Map<number, Date>();
  for (const t of timestamps) {
    const month = monthOf(t);
    if (!partitionsKnown.has(month)) missing.set(month, t);
  }
  if (missing.size === 0) return;
  await ensurePartitions(db, [...missing.values()]);
  for (const month of missing.keys()) partitionsKnown.add(month);
}

/**
 * Stores `events` (checked, unique within the batch) in the caller's transaction: the new ones with their keys, their
 * distinct values and the aggregates' moves. Answers the keys (eventKey) of the events not stored: their keys
 * existed (sent before, or by a concurrent retry that committed first); the others are stored. `horizon`: the latest
 * instant an event of these customers can have been stamped (events-repo.ts probeMonths).
 */
export async function recordUsage(trx: Db, events: UsageEvent[], horizon: Date): Promise<Set<string>> {
  const groups: EventGroup[] = [];
  const index = new Map<string, number>();
  // Undated events share the batch's arrival time: one Date, written once.
  let lastTime: Date | undefined;
  let lastIso = '';
  let last: UsageEvent | undefined;
  let lastGroup = 0;
  const rows: EventInsert[] = events.map((e) => {
    if (e.timestamp !== lastTime) {
      lastTime = e.timestamp;
      lastIso = e.timestamp.toISOString();
    }
    // Consecutive events of one group (most of a batch) reuse its number without a key.
    if (last && last.subscriptionId === e.subscriptionId && last.chargeId === e.chargeId && last.period === e.period)
      return row(lastGroup, e, lastIso);
    const id = `${e.subscriptionId}|${e.chargeId}|${e.period.start.getTime()}`;
    let g = index.get(id);
    if (g === undefined) {
      g = groups.length;
      index.set(id, g);
      groups.push({
        customer_id: e.customerId,
        subscription_id: e.subscriptionId,
        charge_id: e.chargeId,
        metric_id: e.metric.id,
        period_start: e.period.start.toISOString(),
        period_end: e.period.end.toISOString(),
        aggregation: e.metric.aggregation,
      });
    }
    last = e;
    lastGroup = g;
    return row(g, e, lastIso);
  });
  const skipped = await storeEvents(trx, groups, rows, horizon);
  return new Set(skipped.map((r) => eventKey(r.customer_id, r.transaction_id)));
}

/** An event's row for the statement; fields left out are null to it (a 1,000-event batch sends ~40 kB less JSON). */
function row(g: number, e: UsageEvent, timestamp: string): EventInsert {
  const out: EventInsert = { g, transaction_id: e.transactionId, content_hash: e.contentHash, timestamp };
  if (e.value !== null) out.value = e.value;
  if (e.properties !== undefined) out.properties = e.properties;
  return out;
}

/**
 * The content hash stored under each of these events' keys that exists (customer, transactionId and the month of
 * the timestamp or one around it, events-repo.ts KEY_MONTHS), by eventKey.
 */
export function storedEventKeys(db: Db, events: { customerId: string; transactionId: string; timestamp: Date }[]) {
  return findEventKeys(
    db,
    events.map((e) => ({
      customer_id: e.customerId,
      transaction_id: e.transactionId,
      month: keyMonth(e.timestamp.toISOString()),
    })),
  );
}

/** The closed periods of a subscription whose usage was billed, newest first. */
export function billedPeriodsOf(db: Db, customerId: string, subscriptionId: string) {
  return billedPeriods(db, customerId, subscriptionId);
}

/** What each charge of a subscription billed, for which span: where a late event belongs (U-12). */
export function billedSpansOf(db: Db, customerId: string, subscriptionId: string) {
  return billedSpans(db, customerId, subscriptionId);
}

/** A subscription's events in a period, oldest first, in batches of `size` (keyset paging: the CSV export). */
export async function* usageEventBatches(
  db: Db,
  scope: { customerId: string; subscriptionId: string; from: Date; to: Date },
  size = 1000,
): AsyncGenerator<UsageEventRow[]> {
  let after: { timestamp: Date; seq: number } | null = null;
  for (;;) {
    const rows = await eventsOfSubscription(db, scope, after, size);
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    const last = rows.at(-1)!;
    after = { timestamp: last.timestamp, seq: last.seq };
  }
}
