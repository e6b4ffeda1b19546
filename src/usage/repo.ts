/**
 * The usage tables (U-5..U-15) but for the batch's statement (events-repo.ts): events (partitioned by month, keyed by
 * customer, transactionId and month: the dedup), the running aggregates, the distinct values of unique_count
 * charges, and what each period's usage was billed at. Every key leads with the customer's id (U-15).
 */
import type { Db } from '../db/knex.ts';
import { type PreparedStatement, queryPrepared } from '../db/prepared.ts';
import type { Aggregation } from '../metering/aggregations.ts';

/** Creates the month partition of each of these instants that is missing (DDL: outside the ingesting transaction). */
export async function ensurePartitions(db: Db, instants: Date[]): Promise<void> {
  if (instants.length === 0) return;
  await db.raw('select usage_events_partition_for(t) from unnest(?::timestamptz[]) t', [instants]);
}

export interface AggregateKey {
  customer_id: string;
  subscription_id: string;
  charge_id: string;
  period_start: string | Date;
}

export interface AggregateRow extends AggregateKey {
  period_start: Date;
  period_end: Date;
  aggregation: Aggregation;
  quantity: string;
  events: number;
}

const AGGREGATES_OF_PERIOD: PreparedStatement = {
  name: 'usage_aggregates_of_period',
  text: `select customer_id, subscription_id, charge_id, period_start, period_end, aggregation, quantity, events
    from usage_aggregates where customer_id = $1 and subscription_id = $2 and period_start = $3`,
};

/** A subscription's aggregates of one period (a usage read: a few rows, never the events; prepared, U-9's aim). */
export function aggregatesOfPeriod(
  db: Db,
  customerId: string,
  subscriptionId: string,
  periodStart: Date,
): Promise<AggregateRow[]> {
  return queryPrepared<AggregateRow>(db, AGGREGATES_OF_PERIOD, [customerId, subscriptionId, periodStart]);
}

/** The periods of a subscription whose usage was billed (closed periods), newest first. */
export async function billedPeriods(
  db: Db,
  customerId: string,
  subscriptionId: string,
): Promise<{ start: Date; end: Date }[]> {
  const rows: { period_start: Date; period_end: Date }[] = await db('usage_billings')
    .where({ customer_id: customerId, subscription_id: subscriptionId })
    .distinct('period_start', 'period_end')
    .orderBy('period_start', 'desc');
  return rows.map((r) => ({ start: r.period_start, end: r.period_end }));
}

/** What each charge of a subscription billed, for which span (a period, or its part before a plan change). */
export async function billedSpans(
  db: Db,
  customerId: string,
  subscriptionId: string,
): Promise<{ charge_id: string; period_start: Date; period_end: Date }[]> {
  return db('usage_billings')
    .where({ customer_id: customerId, subscription_id: subscriptionId })
    .select('charge_id', 'period_start', 'period_end');
}

/** An aggregate not billed yet or changed since it was billed, with what was billed (null when never). */
export interface PendingUsageRow extends AggregateRow {
  billed_quantity: string | null;
  billed_amount: string | null;
  billed_trial: boolean | null;
}

/**
 * The aggregates of these subscriptions that are unbilled or changed since billed (U-10, U-12), and every aggregate
 * of the period each one closes (`closedStart`, billed or not), in one query.
 */
export async function pendingUsage(
  db: Db,
  subs: { customerId: string; subscriptionId: string; closedStart: Date | null }[],
): Promise<PendingUsageRow[]> {
  if (subs.length === 0) return [];
  const { rows } = await db.raw(
    `select a.*, b.quantity as billed_quantity, b.amount as billed_amount, b.trial as billed_trial
     from jsonb_to_recordset(?::jsonb) as s(customer_id uuid, subscription_id uuid, closed_start timestamptz)
     join usage_aggregates a using (customer_id, subscription_id)
     left join usage_billings b using (customer_id, subscription_id, charge_id, period_start)
     where b.period_start is null or b.quantity <> a.quantity or a.period_start = s.closed_start
     order by a.subscription_id, a.period_start, a.charge_id`,
    [
      JSON.stringify(
        subs.map((s) => ({
          customer_id: s.customerId,
          subscription_id: s.subscriptionId,
          closed_start: s.closedStart?.toISOString() ?? null,
        })),
      ),
    ],
  );
  return rows;
}

export interface BillingRow extends AggregateKey {
  period_end: Date | string;
  quantity: string;
  amount: string;
  trial: boolean;
  invoice_id: string;
}

/** Records what each period's usage is billed at now (first billing or adjustment), one statement. */
export async function upsertBillings(db: Db, rows: BillingRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db('usage_billings')
    .insert(rows)
    .onConflict(['customer_id', 'subscription_id', 'charge_id', 'period_start'])
    .merge(['quantity', 'amount', 'invoice_id', 'period_end', 'trial', 'updated_at']);
}

/** A subscription's events in [from, to) after the keyset `after`, oldest first (the usage CSV export), `limit`. */
export function eventsOfSubscription(
  db: Db,
  scope: { customerId: string; subscriptionId: string; from: Date; to: Date },
  after: { timestamp: Date; seq: number } | null,
  limit: number,
): Promise<UsageEventRow[]> {
  const query = db('usage_events as e')
    .join('billable_metrics as m', 'm.id', 'e.metric_id')
    .where({ 'e.customer_id': scope.customerId, 'e.subscription_id': scope.subscriptionId })
    .where('e.timestamp', '>=', scope.from)
    .where('e.timestamp', '<', scope.to)
    .orderBy([{ column: 'e.timestamp' }, { column: 'e.seq' }])
    .limit(limit)
    .select('e.transaction_id', 'e.timestamp', 'm.code as metric_code', 'e.charge_id', 'e.value', 'e.properties')
    .select('e.seq', 'e.received_at');
  if (after) query.whereRaw('(e.timestamp, e.seq) > (?, ?)', [after.timestamp, after.seq]);
  return query;
}

export interface UsageEventRow {
  transaction_id: string;
  timestamp: Date;
  metric_code: string;
  charge_id: string;
  value: string | null;
  properties: unknown;
  seq: number;
  received_at: Date;
}
