/**
 * A batch of usage events stored in one statement (U-5..U-8, U-15), and the keys of events sent before: the hot
 * path of ingestion, its statements prepared (db/prepared.ts).
 */
import type { Db } from '../db/knex.ts';
import { type PreparedStatement, queryPrepared } from '../db/prepared.ts';
import type { Aggregation } from '../metering/aggregations.ts';

/** What a batch's events share per aggregate: the subscription, charge, metric and period they count in. */
export interface EventGroup {
  customer_id: string;
  subscription_id: string;
  charge_id: string;
  metric_id: string;
  period_start: string;
  period_end: string;
  aggregation: Aggregation;
}

/** An event that passed every check, ready to store; `g` is its group's index. */
export interface EventInsert {
  g: number;
  transaction_id: string;
  content_hash: string;
  timestamp: string;
  value?: string;
  properties?: unknown;
}

/**
 * Events are keyed (customer, transactionId, month of the timestamp) in their month's partition (U-15), and a key is
 * also looked for in the two months before and after: any two timestamps of one transactionId sent within weeks of
 * each other are at most 35 days (U-6's window) and some minutes apart, so within two months of each other. A reuse
 * with another timestamp is then refused (transaction_id_reused) and an undated event's retry across a month's start
 * is a duplicate, as U-6 says; only a transactionId reused months later is taken as a new event (docs/decisions.md).
 */
export const KEY_MONTHS = 2;

/** The month an event is keyed by: the first day of its timestamp's UTC month (the statement's date_trunc). */
export const keyMonth = (isoTimestamp: string) => `${isoTimestamp.slice(0, 7)}-01`;

/**
 * The months a batch's keys are looked for in: KEY_MONTHS before its earliest event's month to KEY_MONTHS after its
 * latest. Bound as two parameters, so the statement's partitions are pruned once when it starts: bounds computed per
 * row pruned the partitions again for every event's probe.
 */
function keyMonths(months: string[]): [string, string] {
  const sorted = [...months].sort();
  return [shiftMonth(sorted[0]!, -KEY_MONTHS), shiftMonth(sorted.at(-1)!, KEY_MONTHS)];
}

const shiftMonth = (month: string, by: number) => {
  const d = new Date(`${month}T00:00:00Z`);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + by, 1)).toISOString().slice(0, 10);
};

/**
 * The months whose partitions the storing statement probes for a batch's keys stored under another month: from
 * KEY_MONTHS before the batch's earliest month up to its latest month + KEY_MONTHS, but not past the month of
 * `horizon`, the latest instant any event of these customers can have been stamped (their clock's time plus U-6's
 * 5 minutes: nothing was ever stored later, a customer's time only moves forward). A batch within one month skips
 * that month (its own key is the insert's conflict); one spanning months probes them all, a key found in its own
 * month being skipped as the conflict would.
 */
export function probeMonths(months: string[], horizon: Date): string[] {
  const own = [...new Set(months)].sort();
  const latest = own.at(-1)!;
  const reach = shiftMonth(latest, KEY_MONTHS);
  const horizonMonth = keyMonth(horizon.toISOString());
  // The later of the latest month and the horizon's, but never past KEY_MONTHS after the latest.
  let upTo = latest;
  if (horizonMonth > upTo) upTo = horizonMonth;
  if (reach < upTo) upTo = reach;
  const probe: string[] = [];
  for (let m = shiftMonth(own[0]!, -KEY_MONTHS); m <= upTo; m = shiftMonth(m, 1))
    if (own.length > 1 || m !== own[0]) probe.push(m);
  return probe;
}

/**
 * The storing statement for a batch whose keys are probed in `months`, prepared once per connection and window (a
 * few a month). The months are literals, not parameters: a generic plan with bound months kept every partition of
 * the table in its plan, locked and set up on every execution (0.6-1 ms a batch of PostgreSQL CPU at 100 events),
 * and probed each event's key in each month with a subplan rescan (5 us an event at 1,000; figures in
 * docs/decisions.md, issue 35 third pass). Literal months are pruned when the statement is planned, and the probe
 * is one index scan per month and customer for all the batch's keys (`= any(array)`), whatever the table holds.
 */
function storeStatement(months: string[]): PreparedStatement {
  const name = `usage_store_events_${months.map((m) => m.slice(0, 7).replace('-', '')).join('_')}`;
  let statement = storeStatements.get(name);
  if (!statement) {
    if (months.some((m) => !/^\d{4}-\d{2}-01$/.test(m))) throw new Error(`storeStatement: not months: ${months}`);
    statement = { name, text: STORE_EVENTS.replace('$MONTHS', months.map((m) => `'${m}'`).join(', ')) };
    storeStatements.set(name, statement);
  }
  return statement;
}

const storeStatements = new Map<string, PreparedStatement>();

const STORE_EVENTS = `with groups as (
       select * from rows from (jsonb_to_recordset($1::jsonb) as (customer_id uuid, subscription_id uuid,
         charge_id uuid, metric_id uuid, period_start timestamptz, period_end timestamptz, aggregation text))
         with ordinality as g(customer_id, subscription_id, charge_id, metric_id, period_start, period_end,
           aggregation, n)
     ), input as (
       select g.customer_id, e.transaction_id, date_trunc('month', e.timestamp at time zone 'UTC')::date as month,
         e.timestamp, e.content_hash, g.metric_id, g.subscription_id, g.charge_id, g.period_start, e.value,
         e.properties
       from jsonb_to_recordset($2::jsonb) as e(g integer, transaction_id text collate "C", content_hash text,
         timestamp timestamptz, value text, properties jsonb)
       join groups g on g.n = e.g + 1
     ), elsewhere as (
       -- A lateral subquery kept apart (offset 0): joined, the planner scanned whole months for the batch's keys.
       select c.customer_id, p.transaction_id
       from (select customer_id, array_agg(transaction_id) as ids from input group by customer_id) c
       cross join lateral (select p.transaction_id from usage_events p where p.customer_id = c.customer_id
         and p.transaction_id = any(c.ids) and p.month in ($MONTHS) offset 0) p
     ), stored as (
       insert into usage_events (customer_id, transaction_id, month, "timestamp", content_hash, metric_id,
         subscription_id, charge_id, period_start, value, properties)
       select i.customer_id, i.transaction_id, i.month, i.timestamp, i.content_hash, i.metric_id, i.subscription_id,
         i.charge_id, i.period_start, i.value, i.properties
       from input i
       -- The key in a neighbouring month: sent before with another timestamp (or an undated retry across a month's
       -- start), never stored twice (KEY_MONTHS, probeMonths).
       where not exists (select from elsewhere x
         where x.customer_id = i.customer_id and x.transaction_id = i.transaction_id)
       order by i.customer_id, i.transaction_id
       on conflict do nothing
       returning customer_id, transaction_id, subscription_id, charge_id, period_start, "timestamp", value, seq
     ), batch as (
       select s.*, g.n, g.aggregation
       from stored s join groups g using (customer_id, subscription_id, charge_id, period_start)
     ), distinct_values as (
       insert into usage_unique_values (customer_id, subscription_id, charge_id, period_start, value)
       select distinct customer_id, subscription_id, charge_id, period_start, value from batch
       where aggregation = 'unique_count' order by 1, 2, 3, 4, 5
       on conflict do nothing
       returning customer_id, subscription_id, charge_id, period_start
     ), tops as (
       select distinct on (n) n, value, seq from batch where aggregation = 'latest'
       order by n, "timestamp" desc, seq desc
     ), moves as (
       -- Grouped by the group's number alone: sorting the batch by four uuid and time keys cost 1 ms a 1,000.
       select b.n,
         case min(b.aggregation)
           when 'count' then count(*)
           when 'sum' then sum(b.value::numeric) filter (where b.aggregation = 'sum')
           when 'max' then max(b.value::numeric) filter (where b.aggregation = 'max')
           when 'unique_count' then (select count(*) from distinct_values d join groups g using (customer_id,
             subscription_id, charge_id, period_start) where g.n = b.n) end as quantity,
         count(*) as events, max(b.timestamp) as latest_at
       from batch b group by b.n
     ), moved as (
       insert into usage_aggregates as a (customer_id, subscription_id, charge_id, period_start, period_end,
         aggregation, quantity, events, latest_at, latest_seq)
       select g.customer_id, g.subscription_id, g.charge_id, g.period_start, g.period_end, g.aggregation,
         coalesce(m.quantity, t.value::numeric), m.events, m.latest_at, t.seq
       from moves m join groups g using (n) left join tops t using (n)
       order by 1, 2, 3, 4
       on conflict (customer_id, subscription_id, charge_id, period_start) do update set
         quantity = case a.aggregation
           when 'max' then greatest(a.quantity, excluded.quantity)
           when 'latest' then case when (excluded.latest_at, excluded.latest_seq) > (a.latest_at, a.latest_seq)
             then excluded.quantity else a.quantity end
           else a.quantity + excluded.quantity end,
         events = a.events + excluded.events,
         latest_seq = case when (excluded.latest_at, excluded.latest_seq) > (a.latest_at, a.latest_seq)
           then excluded.latest_seq else a.latest_seq end,
         latest_at = greatest(a.latest_at, excluded.latest_at),
         updated_at = now()
     )
     select customer_id, transaction_id from input
     except all select customer_id, transaction_id from stored`;

/**
 * Stores a batch in one statement (a bench found the round trips and the per-event work in Node to be most of an
 * ingestion's time, so the events travel as few fields, their shared ones once per group): each event whose
 * (customer, transactionId, month) key is new (ON CONFLICT DO NOTHING waits for a concurrent insert of the same key,
 * then skips it) is inserted, unless a month around it holds its key (KEY_MONTHS); the new distinct values of
 * unique_count charges; and each aggregate moved once by the batch's stored events (U-1): count and sum add, max
 * keeps the largest, latest the value of the latest timestamp (ties: the later accepted), unique_count adds its new
 * distinct values. Rows go in key order, so concurrent batches lock in the same order. Answers the keys of the events
 * NOT stored (their keys existed): usually none, so the answer stays small however large the batch.
 * Measured (bench/profile/usage-ingest-steps.ts, PROFILE_EXPLAIN, 1,000 events of one group): with a key table
 * beside the events 14.5 ms, of which the keys' insert 7.3 and the aggregate's sort of the batch 2.2; one table and
 * no sort unless a `latest` charge needs one: see docs/decisions.md (issue 35, ingestion speed). Planning it took
 * 5.7 ms (the partitions of the table it inserts into and probes), more than its execution for 100 events: it is a
 * prepared statement, planned once per connection.
 */
export async function storeEvents(
  db: Db,
  groups: EventGroup[],
  events: EventInsert[],
  horizon: Date,
): Promise<{ customer_id: string; transaction_id: string }[]> {
  if (events.length === 0) return [];
  const months = new Set<string>();
  for (const e of events) months.add(keyMonth(e.timestamp));
  const statement = storeStatement(probeMonths([...months], horizon));
  return queryPrepared(db, statement, [JSON.stringify(groups), JSON.stringify(events)]);
}

/** A stored key asked for: the month of the event's timestamp (the months around it count too, KEY_MONTHS). */
export interface KeyLookup {
  customer_id: string;
  transaction_id: string;
  month: string;
}

const FIND_EVENT_KEYS: PreparedStatement = {
  name: 'usage_find_event_keys',
  text: `select t.customer_id, t.transaction_id, e.content_hash
     from jsonb_to_recordset($1::jsonb) as t(customer_id uuid, transaction_id text collate "C", month date)
     cross join lateral (
       select k.content_hash from usage_events k
       where k.customer_id = t.customer_id and k.transaction_id = t.transaction_id
         and k.month between $2::date and $3::date
       order by k.month = t.month desc, k.month desc limit 1
     ) e`,
};

/**
 * The content hash stored under each of these keys, by eventKey: in the event's month, else in a month around it
 * (KEY_MONTHS). One index probe per key and month of the batch's window (keyMonths).
 */
export async function findEventKeys(db: Db, keys: KeyLookup[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await queryPrepared<{ customer_id: string; transaction_id: string; content_hash: string }>(
    db,
    FIND_EVENT_KEYS,
    [JSON.stringify(keys), ...keyMonths(keys.map((k) => k.month))],
  );
  return new Map(rows.map((r) => [eventKey(r.customer_id, r.transaction_id), r.content_hash]));
}

export const eventKey = (customerId: string, transactionId: string) => `${customerId}\u0000${transactionId}`;
