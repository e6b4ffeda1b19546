/**
 * Usage event ingestion (U-5..U-8): a batch of up to 1,000 events checked one by one in U-6's order, the good ones
 * stored in one transaction (usage/service.ts recordUsage: keys, events, aggregates), each event answered in order.
 * A (customer, transactionId) sent again with the same content is a duplicate however often and however
 * concurrently it is sent: the key's unique index decides, and a retry waiting on a concurrent insert of the same
 * key sees it once that one commits.
 */
import { hash } from 'node:crypto';
import type { Actor } from '../actor.ts';
import { type AuditEntry, recordAudits } from '../audit/service.ts';
import { customerClockTimes } from '../customers/clock.ts';
import { newUuid } from '../crypto/ids.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { cachedChargesOfPlans, type ChargeWithMetric } from '../metering/charges.ts';
import { cachedMetricsByCode, type MetricRow } from '../metering/service.ts';
import { DECIMAL_PATTERN, money } from '../money.ts';
import { subscriptionsOfCustomers } from '../subscriptions/service.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { eventKey, preparePartitions, recordUsage, storedEventKeys, type UsageEvent } from '../usage/service.ts';
import { type Placement, placeEvent, type SpanMemo } from './event-period.ts';
import type { EventInput, RejectionCode } from './schema.ts';

/** U-6: how far back and ahead of the server's clock an event's timestamp may be. */
export const WINDOW_PAST_MS = 35 * 86_400_000;
export const WINDOW_FUTURE_MS = 5 * 60_000;

export interface EventResult {
  transactionId: string;
  status: 'accepted' | 'duplicate' | 'rejected';
  error?: { code: RejectionCode; message: string };
}

const rejected = (transactionId: string, code: RejectionCode, message: string): EventResult => ({
  transactionId,
  status: 'rejected',
  error: { code, message },
});

/** Object keys sorted at every depth, so the same content hashes the same however its keys were ordered. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** What U-6 compares for a reused transactionId: metric, timestamp, subscription and properties as sent. */
function contentHash(event: EventInput): string {
  const content = [
    event.metric,
    event.timestamp?.getTime() ?? null,
    event.subscriptionId ?? null,
    canonical(event.properties ?? {}),
  ];
  return hash('sha256', JSON.stringify(content), 'base64url');
}

/** The metric's field as a decimal string (a string for unique_count), null for count, undefined when invalid. */
function readValue(metric: MetricRow, properties: Record<string, unknown> | undefined): string | null | undefined {
  if (metric.aggregation === 'count') return null;
  const raw = properties?.[metric.field!];
  if (metric.aggregation === 'unique_count') {
    if (typeof raw === 'string' && raw.length > 0 && raw.length <= 200) return raw;
    return typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
  }
  if (typeof raw === 'number' && Number.isFinite(raw)) return money(raw).toFixed();
  if (typeof raw === 'string' && raw.length <= 40 && DECIMAL_PATTERN.test(raw)) return money(raw).toFixed();
  return undefined;
}

const ACCEPTING: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);

interface World {
  metrics: Map<string, MetricRow>;
  subs: Map<string, SubscriptionRow>;
  charges: Map<string, ChargeWithMetric[]>;
}

async function loadWorld(db: Db, events: EventInput[]): Promise<World> {
  const [metrics, subs] = await Promise.all([
    cachedMetricsByCode(
      db,
      events.map((e) => e.metric),
    ),
    subscriptionsOfCustomers(db, [...new Set(events.map((e) => e.customerId))]),
  ]);
  const charges = await cachedChargesOfPlans(db, [...new Set(subs.map((s) => s.plan_id))]);
  return { metrics, subs: new Map(subs.map((s) => [s.id, s])), charges };
}

/** U-6's checks up to the subscription: the event ready to store, or its rejection. */
function check(
  event: EventInput,
  world: World,
  now: Date,
): EventResult | { ready: Omit<UsageEvent, 'period'> & { sub?: SubscriptionRow } } {
  const id = event.transactionId;
  const metric = world.metrics.get(event.metric);
  if (!metric) return rejected(id, 'unknown_metric', `No metric has the code ${event.metric}`);
  const timestamp = event.timestamp ?? now;
  if (timestamp.getTime() < now.getTime() - WINDOW_PAST_MS || timestamp.getTime() > now.getTime() + WINDOW_FUTURE_MS)
    return rejected(id, 'timestamp_out_of_window', 'The timestamp is older than 35 days or more than 5 minutes ahead');
  const value = readValue(metric, event.properties);
  if (value === undefined)
    return rejected(
      id,
      'invalid_property',
      metric.aggregation === 'unique_count'
        ? `properties.${metric.field} must be a string or a number`
        : `properties.${metric.field} must be a finite decimal (a number or a decimal string)`,
    );
  const named = event.subscriptionId ? world.subs.get(event.subscriptionId) : undefined;
  if (event.subscriptionId && named?.customer_id !== event.customerId)
    return rejected(id, 'subscription_not_found', 'subscriptionId names no subscription of the customer');
  return {
    ready: {
      customerId: event.customerId,
      transactionId: id,
      contentHash: contentHash(event),
      timestamp,
      metric,
      subscriptionId: named?.id ?? '',
      chargeId: '',
      value,
      properties: event.properties,
      dated: event.timestamp !== undefined,
      sub: named,
    },
  };
}

/**
 * The subscription and charge an event bills and the period it counts in, or why none (U-6 no_matching_charge,
 * U-8): among the subscription it names, else the customer's live ones, those with a charge of its metric then.
 */
async function matchCharge(
  db: Db,
  ready: Omit<UsageEvent, 'period'> & { sub?: SubscriptionRow },
  world: World,
  spans: SpanMemo,
): Promise<{ sub: SubscriptionRow; placement: Placement } | string> {
  const candidates = (
    ready.sub ? [ready.sub] : [...world.subs.values()].filter((s) => s.customer_id === ready.customerId)
  ).filter((sub) => ACCEPTING.has(sub.status) && sub.created_at.getTime() <= ready.timestamp.getTime());
  const matches: { sub: SubscriptionRow; placement: Placement }[] = [];
  for (const sub of candidates) {
    const event = { metricId: ready.metric.id, at: ready.timestamp, dated: ready.dated };
    const placement = await placeEvent(db, sub, world.charges.get(sub.plan_id) ?? [], event, spans);
    if (placement) matches.push({ sub, placement });
  }
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    return `Several subscriptions of the customer charge ${ready.metric.code}: name one in subscriptionId`;
  return `No active, trialing or past due subscription of the customer charges ${ready.metric.code} at that time`;
}

/**
 * Ingests one batch (U-5..U-8) for the customers its events name; answers one result per event, in order. The events
 * are checked against one read of the metrics, subscriptions and charges, then stored in one transaction.
 */
export async function ingestEvents(
  db: Db,
  events: EventInput[],
  options: { now?: Date; actor?: Actor } = {},
): Promise<EventResult[]> {
  const now = options.now ?? new Date();
  // A test clock's customer's events are judged against its clock's time (TC-2).
  const clockTimes = options.now
    ? new Map<string, Date>()
    : await customerClockTimes(
        db,
        events.map((e) => e.customerId),
      );
  const world = await loadWorld(db, events);
  const results: (EventResult | undefined)[] = events.map(() => undefined);
  const ready: { index: number; event: UsageEvent }[] = [];
  const unmatched: { index: number; event: Omit<UsageEvent, 'period'>; message: string }[] = [];
  const spans: SpanMemo = new Map();
  const placements = new Map<string, ReturnType<typeof matchCharge>>();
  for (const [index, event] of events.entries()) {
    const checked = check(event, world, clockTimes.get(event.customerId) ?? now);
    if (!('ready' in checked)) {
      results[index] = checked;
      continue;
    }
    const { sub: _named, ...base } = checked.ready;
    // Events alike in what places them (undated ones of a batch share its arrival time) are placed once.
    const alike = `${base.customerId}|${event.subscriptionId ?? ''}|${base.metric.id}|${+base.timestamp}|${base.dated}`;
    let placing = placements.get(alike);
    if (!placing) {
      placing = matchCharge(db, checked.ready, world, spans);
      placements.set(alike, placing);
    }
    const match = await placing;
    if (typeof match === 'string') {
      unmatched.push({ index, event: base, message: match });
      continue;
    }
    const { chargeId, period } = match.placement;
    ready.push({ index, event: { ...base, subscriptionId: match.sub.id, chargeId, period } });
  }
  await preparePartitions(
    db,
    ready.map((r) => r.event.timestamp),
  );
  const batches = rounds(ready);
  // No event of these customers was ever stamped later than their time now plus U-6's 5 minutes.
  let latestNow = now.getTime();
  for (const t of clockTimes.values()) latestNow = Math.max(latestNow, t.getTime());
  const horizon = new Date(latestNow + WINDOW_FUTURE_MS);
  // One statement is one transaction; a transactionId twice in one batch takes a later round (it meets the first's
  // key), and the rounds share one transaction.
  // An admin's batch also leaves its audit row (C-11), in the same transaction.
  const { actor } = options;
  const store = (work: (db: Db) => Promise<void>) => (batches.length > 1 || actor ? inTransaction(db, work) : work(db));
  await store(async (trx) => {
    for (const round of batches) {
      const skipped = await recordUsage(
        trx,
        round.map((r) => r.event),
        horizon,
      );
      for (const r of round)
        if (!skipped.has(eventKey(r.event.customerId, r.event.transactionId)))
          results[r.index] = { transactionId: r.event.transactionId, status: 'accepted' };
    }
    const seen = [...ready.filter((r) => !results[r.index]), ...unmatched];
    const hashes = await storedEventKeys(
      trx,
      seen.map((s) => s.event),
    );
    for (const s of seen) {
      const hash = hashes.get(eventKey(s.event.customerId, s.event.transactionId));
      const id = s.event.transactionId;
      if (hash === s.event.contentHash) results[s.index] = { transactionId: id, status: 'duplicate' };
      else if (hash !== undefined)
        results[s.index] = rejected(
          id,
          'transaction_id_reused',
          `Transaction ${id} was sent before with other content`,
        );
      else results[s.index] = rejected(id, 'no_matching_charge', 'message' in s ? s.message : 'No charge matches');
    }
    if (actor) await recordAudits(trx, actor, [batchAudit(results)]);
  });
  return results.map((r) => r!);
}

/** The audit entry of an admin's batch (C-11): how many events it held and how each was answered. */
function batchAudit(results: (EventResult | undefined)[]): AuditEntry {
  const count = (status: EventResult['status']) => results.filter((r) => r?.status === status).length;
  return {
    action: 'usage.record',
    targetType: 'usage_batch',
    targetId: newUuid(),
    after: {
      events: results.length,
      accepted: count('accepted'),
      duplicate: count('duplicate'),
      rejected: count('rejected'),
    },
  };
}

/** Splits events into rounds holding each (customer, transactionId) at most once, first occurrences first. */
function rounds<T extends { event: { customerId: string; transactionId: string } }>(items: T[]): T[][] {
  const out: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const key = eventKey(item.event.customerId, item.event.transactionId);
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    if (!out[n]) out[n] = [];
    out[n]!.push(item);
  }
  return out;
}
