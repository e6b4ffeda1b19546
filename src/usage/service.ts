/**
 * Recording usage (U-5..U-8): events that passed every check are stored with their keys, and the running aggregate
 * of each (subscription, charge, period) moves in the same transaction, so the next read counts them (U-7) without
 * scanning events. The callers (usage-api/) check the events; this module knows no HTTP and no subscription table.
 */
import type { Db } from '../db/knex.ts';
import type { MetricRow } from '../metering/service.ts';
import { Money, money } from '../money.ts';
import {
  type AggregateDelta,
  type AggregateKey,
  billedPeriods,
  eventsOfSubscription,
  type UsageEventRow,
  ensurePartitions,
  type EventInsert,
  eventKey,
  findEventKeys,
  insertNewEvents,
  insertUniqueValues,
  upsertAggregates,
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

const keyOf = (k: AggregateKey) =>
  `${k.customer_id}|${k.subscription_id}|${k.charge_id}|${new Date(k.period_start).toISOString()}`;

/** Each aggregate's change from the stored events (with their acceptance order `seq`) and new distinct values. */
function deltasOf(stored: (UsageEvent & { seq: number })[], newValues: Map<string, number>): AggregateDelta[] {
  const deltas = new Map<string, AggregateDelta & { latestValue: Money; latestAt: Date }>();
  for (const e of stored) {
    const key: AggregateKey = {
      customer_id: e.customerId,
      subscription_id: e.subscriptionId,
      charge_id: e.chargeId,
      period_start: e.period.start.toISOString(),
    };
    const id = keyOf(key);
    const value =
      e.metric.aggregation === 'count' ? money(1) : money(e.metric.aggregation === 'unique_count' ? 0 : e.value!);
    let d = deltas.get(id);
    if (!d) {
      d = {
        ...key,
        period_end: e.period.end.toISOString(),
        aggregation: e.metric.aggregation,
        quantity: e.metric.aggregation === 'unique_count' ? String(newValues.get(id) ?? 0) : value.toString(),
        events: 0,
        latest_at: e.timestamp.toISOString(),
        latest_seq: e.seq,
        latestValue: value,
        latestAt: e.timestamp,
      };
      deltas.set(id, d);
    } else if (d.aggregation === 'count' || d.aggregation === 'sum') d.quantity = value.plus(d.quantity).toString();
    else if (d.aggregation === 'max') d.quantity = Money.max(value, d.quantity).toString();
    d.events += 1;
    const later = e.timestamp > d.latestAt || (e.timestamp.getTime() === d.latestAt.getTime() && e.seq > d.latest_seq);
    if (later) {
      Object.assign(d, { latest_at: e.timestamp.toISOString(), latest_seq: e.seq, latestAt: e.timestamp });
      if (d.aggregation === 'latest') d.quantity = value.toString();
    }
  }
  return [...deltas.values()].map(({ latestValue: _v, latestAt: _a, ...d }) => d);
}

/**
 * Stores `events` (checked, unique within the batch) in the caller's transaction: the new ones with their keys, their
 * distinct values and the aggregates' moves. Answers the keys (eventKey) of the events stored; the others' keys
 * existed (sent before, or by a concurrent retry that committed first).
 */
export async function recordUsage(trx: Db, events: UsageEvent[]): Promise<Set<string>> {
  const rows: EventInsert[] = events.map((e) => ({
    customer_id: e.customerId,
    transaction_id: e.transactionId,
    content_hash: e.contentHash,
    timestamp: e.timestamp.toISOString(),
    metric_id: e.metric.id,
    subscription_id: e.subscriptionId,
    charge_id: e.chargeId,
    period_start: e.period.start.toISOString(),
    value: e.value,
    properties: e.properties ?? null,
  }));
  const inserted = await insertNewEvents(trx, rows);
  const seqOf = new Map(inserted.map((r) => [eventKey(r.customer_id, r.transaction_id), r.seq]));
  const stored = events.flatMap((e) => {
    const seq = seqOf.get(eventKey(e.customerId, e.transactionId));
    return seq === undefined ? [] : [{ ...e, seq }];
  });
  const distinct = stored
    .filter((e) => e.metric.aggregation === 'unique_count')
    .map((e) => ({
      customer_id: e.customerId,
      subscription_id: e.subscriptionId,
      charge_id: e.chargeId,
      period_start: e.period.start.toISOString(),
      value: e.value!,
    }));
  const newValues = new Map<string, number>();
  for (const key of await insertUniqueValues(trx, distinct))
    newValues.set(keyOf(key), (newValues.get(keyOf(key)) ?? 0) + 1);
  await upsertAggregates(trx, deltasOf(stored, newValues));
  return new Set(seqOf.keys());
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
