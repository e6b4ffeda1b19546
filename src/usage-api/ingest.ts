/**
 * Usage event ingestion (U-5..U-8): a batch of up to 1,000 events checked one by one in U-6's order, the good ones
 * stored in one transaction (usage/service.ts recordUsage: keys, events, aggregates), each event answered in order.
 * A (customer, transactionId) sent again with the same content is a duplicate however often and however
 * concurrently it is sent: the key's unique index decides, and a retry waiting on a concurrent insert of the same
 * key sees it once that one commits.
 */
import type { Actor } from '../actor.ts';
import { type AuditEntry, recordAudits } from '../audit/service.ts';
import { customerClockTimes } from '../customers/clock.ts';
import { newUuid } from '../crypto/ids.ts';
import { inTransaction, type Db } from '../db/knex.ts';
import { cachedChargesOfPlans, type ChargeWithMetric } from '../metering/charges.ts';
import { cachedMetricsByCode, type MetricRow } from '../metering/service.ts';
import { subscriptionsOfCustomers } from '../subscriptions/service.ts';
import type { SubscriptionRow } from '../subscriptions/repo.ts';
import { eventKey, preparePartitions, recordUsage, storedEventKeys, type UsageEvent } from '../usage/service.ts';
import { batchContentHasher, readValue } from './event-content.ts';
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

type Match = Awaited<ReturnType<typeof matchCharge>>;

/** Whether two checked events are placed alike: same customer, metric and instant, both dated or both not. */
const alike = (a: UsageEvent, b: UsageEvent) =>
  a.customerId === b.customerId &&
  a.metric === b.metric &&
  a.timestamp.getTime() === b.timestamp.getTime() &&
  a.dated === b.dated;

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

/** Where an event's subscription, charge and period go once it is placed (matchCharge). */
const UNPLACED = { start: new Date(0), end: new Date(0) };

/**
 * U-6's checks up to the subscription: the event ready to store (placed by the caller: its subscription, charge and
 * period are filled in then, one object per event) with the subscription it names, or its rejection.
 */
function check(
  event: EventInput,
  world: World,
  now: Date,
  hashOf: (event: EventInput) => string,
): EventResult | { ready: UsageEvent; named: SubscriptionRow | undefined } {
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
  const ready: UsageEvent = {
    customerId: event.customerId,
    transactionId: id,
    contentHash: hashOf(event),
    timestamp,
    metric,
    subscriptionId: named?.id ?? '',
    chargeId: '',
    period: UNPLACED,
    value,
    properties: event.properties,
    dated: event.timestamp !== undefined,
  };
  return { ready, named };
}

/**
 * The subscription and charge an event bills and the period it counts in, or why none (U-6 no_matching_charge,
 * U-8): among the subscription it names, else the customer's live ones, those with a charge of its metric then.
 */
async function matchCharge(
  db: Db,
  ready: UsageEvent,
  named: SubscriptionRow | undefined,
  world: World,
  spans: SpanMemo,
): Promise<{ sub: SubscriptionRow; placement: Placement } | string> {
  const candidates = (
    named ? [named] : [...world.subs.values()].filter((s) => s.customer_id === ready.customerId)
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
  const unmatched: { index: number; event: UsageEvent; message: string }[] = [];
  const spans: SpanMemo = new Map();
  const placements = new Map<string, Match>();
  const hashOf = batchContentHasher();
  let last: { event: UsageEvent; subscriptionId: string | undefined; match: Match } | undefined;
  for (const [index, event] of events.entries()) {
    const checked = check(event, world, clockTimes.get(event.customerId) ?? now, hashOf);
    if (!('ready' in checked)) {
      results[index] = checked;
      continue;
    }
    const e = checked.ready;
    // Events alike in what places them (undated ones of a batch share its arrival time) are placed once; the
    // previous event's placement is tried first, without a key (most batches are one customer's, one metric's).
    let match: Match;
    if (last && alike(last.event, e) && last.subscriptionId === event.subscriptionId) match = last.match;
    else {
      const key = `${e.customerId}|${event.subscriptionId ?? ''}|${e.metric.id}|${+e.timestamp}|${e.dated}`;
      let placing = placements.get(key);
      if (!placing) {
        placing = await matchCharge(db, e, checked.named, world, spans);
        placements.set(key, placing);
      }
      match = placing;
      last = { event: e, subscriptionId: event.subscriptionId, match };
    }
    if (typeof match === 'string') {
      unmatched.push({ index, event: e, message: match });
      continue;
    }
    e.subscriptionId = match.sub.id;
    e.chargeId = match.placement.chargeId;
    e.period = match.placement.period;
    ready.push({ index, event: e });
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
        if (skipped.size === 0 || !skipped.has(eventKey(r.event.customerId, r.event.transactionId)))
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
      else
        results[s.index] = rejected(
          id,
          'no_matching_charge',
          'message' in s ? (s.message as string) : 'No charge matches',
        );
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
  // By customer, then transactionId: no key string per event (a batch is usually one customer's, ids all new).
  const seen = new Map<string, Map<string, number>>();
  for (const item of items) {
    let ids = seen.get(item.event.customerId);
    if (!ids) {
      ids = new Map();
      seen.set(item.event.customerId, ids);
    }
    const n = ids.get(item.event.transactionId) ?? 0;
    ids.set(item.event.transactionId, n + 1);
    if (!out[n]) out[n] = [];
    out[n]!.push(item);
  }
  return out;
}
