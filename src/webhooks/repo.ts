import { fastQuery } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { EventRow } from '../events/repo.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
  at: Date;
}

export async function insertEndpoint(db: Db, row: { url: string; events: string[]; secret: string }): Promise<EndpointRow> {
  const [created] = await db('webhook_endpoints').insert(row).returning('*');
  return created as EndpointRow;
}

export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db('webhook_endpoints').where({ id }).first();
}

export function listEndpointRows(db: Db, page: PageQuery): Promise<Page<EndpointRow>> {
  return paginate<EndpointRow>(db('webhook_endpoints').select('*'), 'webhook_endpoints', page);
}

export async function updateEndpointRow(db: Db, id: string, changes: Partial<Pick<EndpointRow, 'url' | 'events' | 'secret' | 'enabled'>>): Promise<EndpointRow | undefined> {
  const [row] = await db('webhook_endpoints').where({ id }).update({ ...changes, updated_at: db.raw('clock_timestamp()') }).returning('*');
  return row as EndpointRow | undefined;
}

export async function deleteEndpointRow(db: Db, id: string): Promise<number> {
  return db('webhook_endpoints').where({ id }).delete();
}

/**
 * One pending delivery, due now, per enabled endpoint subscribed to an event's type or to '*', for many events
 * in one statement, which also notifies the webhook workers (on commit) when it inserted any. Answers how many.
 */
export async function insertDueDeliveries(db: Db, events: Pick<EventRow, 'id' | 'type'>[]): Promise<number> {
  if (events.length === 0) return 0;
  const result = await db.raw(
    `with inserted as (
       insert into webhook_deliveries (endpoint_id, event_id)
       select e.id, v.id
         from jsonb_to_recordset(?::jsonb) as v(id text, type text)
         join webhook_endpoints e on e.enabled and e.events && array[v.type, '*']::text[]
       on conflict (endpoint_id, event_id) do nothing
       returning 1
     ), counted as (select count(*)::int as n from inserted)
     select n, case when n > 0 then pg_notify(?, null)::text end as notified from counted`,
    [JSON.stringify(events.map((e) => ({ id: e.id, type: e.type }))), DELIVERIES_DUE_CHANNEL],
  );
  return (result.rows[0] as { n: number }).n;
}

const deliveryColumns = ['webhook_deliveries.*', 'events.type as event_type'];

export async function findDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries').join('events', 'events.id', 'webhook_deliveries.event_id').where('webhook_deliveries.id', id).first(deliveryColumns);
}

export function listDeliveryRows(db: Db, endpointId: string, page: PageQuery): Promise<Page<DeliveryRow>> {
  return paginate<DeliveryRow>(
    db('webhook_deliveries').join('events', 'events.id', 'webhook_deliveries.event_id').where('webhook_deliveries.endpoint_id', endpointId).select(deliveryColumns),
    'webhook_deliveries',
    page,
  );
}

export async function listAttemptRows(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db('webhook_delivery_attempts').whereIn('delivery_id', deliveryIds).orderBy([{ column: 'at' }, { column: 'attempt' }]);
}

/** The channel a committed fan-out or redelivery notifies, so webhook workers claim at once (D-70). */
export const DELIVERIES_DUE_CHANNEL = 'webhook_deliveries_due';

/** Tells listening webhook workers that deliveries are due; inside a transaction it is sent on commit. */
export async function notifyDeliveriesDue(db: Db): Promise<void> {
  await db.raw('select pg_notify(?, null)', [DELIVERIES_DUE_CHANNEL]);
}

/** A claimed delivery with what its send needs: the endpoint and the event, read in the claim. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  attempt_count: number;
  enabled: boolean;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
}

/** How one claim may spread its slots over endpoints (the dispatcher's view of them, D-70). */
export interface ClaimLimits {
  /** Deliveries claimed at most (the free send slots). */
  limit: number;
  /** Endpoints left out (at their cap in this process). */
  full: string[];
  /** Deliveries an endpoint may get, by endpoint id; others get `defaultRoom`. */
  room: Record<string, number>;
  defaultRoom: number;
  /** Endpoints whose last attempt failed: together they get at most `failingRoom`. */
  failing: string[];
  failingRoom: number;
  leaseMs: number;
}

/**
 * Claims due pending deliveries, oldest due first, in one statement, within `limits`: rows another worker holds
 * are skipped (FOR UPDATE SKIP LOCKED), endpoints in `full` are left out, no endpoint gets more than its room,
 * and the failing endpoints share at most `failingRoom`. A claimed delivery's `next_attempt_at` becomes the end
 * of the lease, so a worker that dies mid-send leaves it due again then. A delivery whose endpoint is disabled
 * is parked instead (no `next_attempt_at`: it waits for a manual retry) and comes back with `enabled` false.
 */
export async function claimDueDeliveries(db: Db, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  return fastQuery<ClaimedDelivery>(
    db,
    `with candidate as (
       select d.id, d.endpoint_id, d.next_attempt_at
         from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at is not null and d.next_attempt_at <= clock_timestamp()
          and d.endpoint_id <> all($1::uuid[])
        order by d.next_attempt_at
        limit $2
        for update of d skip locked
     ), ranked as (
       select c.id, c.next_attempt_at, c.endpoint_id = any($7::uuid[]) as failing,
              row_number() over (partition by c.endpoint_id order by c.next_attempt_at, c.id) as n,
              coalesce(($3::jsonb ->> c.endpoint_id::text)::int, $4::int) as room
         from candidate c
     ), allowed as (
       select id, next_attempt_at, failing, row_number() over (partition by failing order by next_attempt_at, id) as k
         from ranked where n <= room
     ), chosen as (
       select id from allowed where not failing or k <= $8 order by next_attempt_at limit $5
     )
     update webhook_deliveries d
        set next_attempt_at = case when e.enabled then clock_timestamp() + $6::int * interval '1 millisecond' end
       from chosen, webhook_endpoints e, events ev
      where d.id = chosen.id and e.id = d.endpoint_id and ev.id = d.event_id
     returning d.id, d.endpoint_id, d.attempt_count, e.enabled, e.url, e.secret,
               ev.id as event_id, ev.type as event_type, ev.data as event_data, ev.created_at as event_created_at`,
    [limits.full, limits.limit * 2, JSON.stringify(limits.room), limits.defaultRoom, limits.limit, Math.round(limits.leaseMs), limits.failing, limits.failingRoom],
  );
}

/** One finished attempt of a claimed delivery and where it leaves the delivery. */
export interface AttemptOutcome {
  delivery_id: string;
  /** This attempt's number (attempts made before it + 1). */
  attempt: number;
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
}

/**
 * Logs many attempts and moves their deliveries on, in one statement (atomic on its own). A delivery moves
 * only from the attempt count its send started at, still pending (another send that got there first, or a
 * manual retry's reopening, wins); its attempt is logged either way. Answers the ids that moved.
 */
export async function recordAttemptOutcomes(db: Db, outcomes: AttemptOutcome[]): Promise<string[]> {
  if (outcomes.length === 0) return [];
  const rows = await fastQuery<{ id: string }>(
    db,
    `with outcome as (
       select * from jsonb_to_recordset($1::jsonb) as o(
         delivery_id uuid, attempt int, status text, next_attempt_at timestamptz, status_code int, latency_ms int, error text, response_body text)
     ), logged as (
       insert into webhook_delivery_attempts (delivery_id, attempt, status_code, latency_ms, error, response_body)
       select o.delivery_id, o.attempt, o.status_code, o.latency_ms, o.error, o.response_body
         from outcome o join webhook_deliveries d on d.id = o.delivery_id
     )
     update webhook_deliveries d
        set attempt_count = o.attempt, status = o.status, next_attempt_at = o.next_attempt_at,
            delivered_at = case when o.status = 'delivered' then clock_timestamp() end, updated_at = clock_timestamp()
       from outcome o
      where d.id = o.delivery_id and d.attempt_count = o.attempt - 1 and d.status = 'pending'
     returning d.id`,
    [JSON.stringify(outcomes)],
  );
  return rows.map((r) => r.id);
}

/** Puts a delivery back to pending for a manual redelivery; returns its attempt count. */
export async function reopenDelivery(db: Db, id: string, endpointId: string): Promise<number | undefined> {
  const [row] = await db('webhook_deliveries')
    .where({ id, endpoint_id: endpointId })
    .update({ status: 'pending', next_attempt_at: db.raw('clock_timestamp()'), updated_at: db.raw('clock_timestamp()') })
    .returning('attempt_count');
  return (row as { attempt_count: number } | undefined)?.attempt_count;
}

/** A delivery with the URL of its endpoint, for pages that list deliveries of many endpoints. */
export type DeliveryWithUrl = DeliveryRow & { endpoint_url: string };

/** The deliveries of these events, newest first, in one statement. */
export async function listDeliveryRowsOfEvents(db: Db, eventIds: string[]): Promise<DeliveryWithUrl[]> {
  if (eventIds.length === 0) return [];
  return db('webhook_deliveries')
    .join('events', 'events.id', 'webhook_deliveries.event_id')
    .join('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
    .whereIn('webhook_deliveries.event_id', [...new Set(eventIds)])
    .orderBy([{ column: 'webhook_deliveries.created_at', order: 'desc' }, { column: 'webhook_deliveries.id', order: 'desc' }])
    .select([...deliveryColumns, 'webhook_endpoints.url as endpoint_url']);
}
