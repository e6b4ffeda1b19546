/**
 * Recording usage (U-5..U-8): events that passed every check are stored with their keys, and the running aggregate
 * of each (subscription, charge, period) moves in the same transaction, so the next read counts them (U-7) without
 * scanning events. The callers (usage-api/) check the events; this module knows no HTTP and no subscription table.
 */
import type { Db } from '../db/knex.ts';
import type { MetricRow } from '../metering/service.ts';
import {
  billedPeriods,
  eventsOfSubscription,
  type UsageEventRow,
  ensurePartitions,
  eventKey,
  findEventKeys,
  storeEvents,
} from './repo.ts';

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
}

const partitionsKnown = new Set<string>();
const monthOf = (d: Date) => d.toISOString().slice(0, 7);

/**
 * The month partitions these events need. Created ahead by the migration and on first use here: DDL on the parent
 * table, so it runs before (and outside) the ingesting transaction, once per month per process.
 */
export async function preparePartitions(db: Db, timestamps: Date[]): Promise<void> {
  const missing = [...new Map(timestamps.map((t) => [monthOf(t), t])).entries()].filter(
    ([m]) => !partitionsKnown.has(m),
  );
  if (missing.length === 0) return;
  await ensurePartitions(
    db,
    missing.map(([, t]) => t),
  );
  for (const [m] of missing) partitionsKnown.add(m);
}

/**
 * Stores `events` (checked, unique within the batch) in the caller's transaction: the new ones with their keys, their
 * distinct values and the aggregates' moves. Answers the keys (eventKey) of the events stored; the others' keys
 * existed (sent before, or by a concurrent retry that committed first).
 */
export async function recordUsage(trx: Db, events: UsageEvent[]): Promise<Set<string>> {
  const stored = await storeEvents(
    trx,
    events.map((e) => ({
      customer_id: e.customerId,
      transaction_id: e.transactionId,
      content_hash: e.contentHash,
      timestamp: e.timestamp.toISOString(),
      metric_id: e.metric.id,
      subscription_id: e.subscriptionId,
      charge_id: e.chargeId,
      period_start: e.period.start.toISOString(),
      period_end: e.period.end.toISOString(),
      aggregation: e.metric.aggregation,
      value: e.value,
      properties: e.properties ?? null,
    })),
  );
  return new Set(stored.map((r) => eventKey(r.customer_id, r.transaction_id)));
}

/** The content hash stored for each of these (customer, transactionId) keys that exists. */
export function storedEventKeys(db: Db, keys: { customerId: string; transactionId: string }[]) {
  return findEventKeys(
    db,
    keys.map((k) => ({ customer_id: k.customerId, transaction_id: k.transactionId })),
  );
}

/** The closed periods of a subscription whose usage was billed, newest first. */
export function billedPeriodsOf(db: Db, customerId: string, subscriptionId: string) {
  return billedPeriods(db, customerId, subscriptionId);
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
