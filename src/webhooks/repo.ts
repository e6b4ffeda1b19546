import { fastQuery } from '../db/fast-query.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  secret: string;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  /** When the current secret was set by a rotation or a PUT (null: the one it was created with). */
  secret_rotated_at: Date | null;
  /** The secret a rotation replaced, and until when it still signs (its grace period). */
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
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

export async function insertEndpoint(
  db: Db,
  row: { url: string; events: string[]; secret: string },
): Promise<EndpointRow> {
  const [created] = await db('webhook_endpoints').insert(row).returning('*');
  return created as EndpointRow;
}

export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db('webhook_endpoints').where({ id }).first();
}

export async function lockEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db('webhook_endpoints').where({ id }).forUpdate().first();
}

export function listEndpointRows(db: Db, page: PageQuery): Promise<Page<EndpointRow>> {
  return paginate<EndpointRow>(db('webhook_endpoints').select('*'), 'webhook_endpoints', page);
}

export async function updateEndpointRow(
  db: Db,
  id: string,
  changes: Partial<Pick<EndpointRow, 'url' | 'events' | 'secret' | 'enabled'>>,
): Promise<EndpointRow | undefined> {
  // A secret set outright replaces the old one at once: no grace period (that is what rotation is for).
  const secret =
    changes.secret === undefined
      ? {}
      : { secret_rotated_at: db.raw('clock_timestamp()'), previous_secret: null, previous_secret_expires_at: null };
  const [row] = await db('webhook_endpoints')
    .where({ id })
    .update({ ...changes, ...secret, updated_at: db.raw('clock_timestamp()') })
    .returning('*');
  return row as EndpointRow | undefined;
}

/** Replaces the secret with `secret`; the one it replaces keeps signing for `graceSeconds` (a rotation). */
export async function rotateEndpointSecretRow(
  db: Db,
  id: string,
  secret: string,
  graceSeconds: number,
): Promise<EndpointRow | undefined> {
  const [row] = await db('webhook_endpoints')
    .where({ id })
    .update({
      // The right-hand sides read the row as it was: the previous secret is the one being replaced.
      previous_secret: db.raw('secret'),
      previous_secret_expires_at: db.raw(`clock_timestamp() + ? * interval '1 second'`, [graceSeconds]),
      secret,
      secret_rotated_at: db.raw('clock_timestamp()'),
      updated_at: db.raw('clock_timestamp()'),
    })
    .returning('*');
  return row as EndpointRow | undefined;
}

export async function deleteEndpointRow(db: Db, id: string): Promise<number> {
  return db('webhook_endpoints').where({ id }).delete();
}

/**
 * One pending delivery, due now, per enabled endpoint subscribed to an event's type or to '*', for the events
 * (id, type) of the relation `events` (a CTE of the same statement: the inserted events, so they are not read
 * from their parameter a second time), and a notify of the webhook workers on `channelParam` (heard on commit)
 * when any was inserted: the CTEs `delivered` and `notified` (one row: `n` inserted), to end the statement
 * that inserts the events themselves (events/repo.ts insertEventsWith). `?` or `$n` placeholder.
 */
export function dueDeliveriesCtes(events: string, channelParam: string): string {
  return `delivered as (
       insert into webhook_deliveries (endpoint_id, event_id)
       select e.id, v.id
         from ${events} v
         join webhook_endpoints e on e.enabled and e.events && array[v.type, '*']::text[]
       on conflict (endpoint_id, event_id) do nothing
       returning 1
     ), notified as (
       select count(*)::int as n, case when count(*) > 0 then pg_notify(${channelParam}, null)::text end as notice
         from delivered
     )`;
}

const deliveryColumns = ['webhook_deliveries.*', 'events.type as event_type'];

export async function findDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries')
    .join('events', 'events.id', 'webhook_deliveries.event_id')
    .where('webhook_deliveries.id', id)
    .first(deliveryColumns);
}

export async function lockDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries')
    .join('events', 'events.id', 'webhook_deliveries.event_id')
    .where('webhook_deliveries.id', id)
    .forUpdate('webhook_deliveries')
    .first(deliveryColumns);
}

export function listDeliveryRows(
  db: Db,
  endpointId: string,
  page: PageQuery,
  status?: DeliveryStatus,
): Promise<Page<DeliveryRow>> {
  const query = db('webhook_deliveries')
    .join('events', 'events.id', 'webhook_deliveries.event_id')
    .where('webhook_deliveries.endpoint_id', endpointId)
    .select(deliveryColumns);
  if (status) query.where('webhook_deliveries.status', status);
  return paginate<DeliveryRow>(query, 'webhook_deliveries', page);
}

/** An endpoint's deliveries created since a time, by status, and its latest failed attempt among them. */
export interface EndpointHealthRow {
  endpoint_id: string;
  delivered: number;
  failed: number;
  pending: number;
  last_failure_at: Date | null;
  last_failure_status: number | null;
  last_failure_error: string | null;
}

/**
 * The health of many endpoints over the deliveries created in the last `windowSeconds`, in one statement:
 * counts by status (the (endpoint_id, created_at) index bounds each endpoint to its window) and, per endpoint,
 * the newest attempt of those deliveries that did not succeed (a non-2xx answer or no answer).
 */
export async function endpointHealthRows(
  db: Db,
  endpointIds: string[],
  windowSeconds: number,
): Promise<EndpointHealthRow[]> {
  if (endpointIds.length === 0) return [];
  const result = await db.raw(
    `with recent as (
       select d.id, d.endpoint_id, d.status
         from webhook_deliveries d
        where d.endpoint_id = any(?::uuid[]) and d.created_at > clock_timestamp() - ? * interval '1 second'
     ), counted as (
       select endpoint_id,
              count(*) filter (where status = 'delivered')::int as delivered,
              count(*) filter (where status = 'failed')::int as failed,
              count(*) filter (where status = 'pending')::int as pending
         from recent group by endpoint_id
     ), last_failure as (
       select distinct on (r.endpoint_id) r.endpoint_id, a.at, a.status_code, a.error
         from recent r join webhook_delivery_attempts a on a.delivery_id = r.id
        where a.status_code is null or a.status_code not between 200 and 299
        order by r.endpoint_id, a.at desc
     )
     select c.endpoint_id, c.delivered, c.failed, c.pending,
            f.at as last_failure_at, f.status_code as last_failure_status, f.error as last_failure_error
       from counted c left join last_failure f on f.endpoint_id = c.endpoint_id`,
    [endpointIds, windowSeconds],
  );
  return result.rows as EndpointHealthRow[];
}

export async function listAttemptRows(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db('webhook_delivery_attempts')
    .whereIn('delivery_id', deliveryIds)
    .orderBy([{ column: 'at' }, { column: 'attempt' }]);
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
  /** The secret a rotation replaced, while its grace period lasts (it signs too). */
  previous_secret: string | null;
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
               case when e.previous_secret_expires_at > clock_timestamp() then e.previous_secret end as previous_secret,
               ev.id as event_id, ev.type as event_type, ev.data as event_data, ev.created_at as event_created_at`,
    [
      limits.full,
      limits.limit * 2,
      JSON.stringify(limits.room),
      limits.defaultRoom,
      limits.limit,
      Math.round(limits.leaseMs),
      limits.failing,
      limits.failingRoom,
    ],
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
 * Logs many attempts and moves their deliveries on, in one statement (atomic on its own), and writes what the
 * worker learned meanwhile of the endpoints' health (shared by every webhooks worker). A delivery moves
 * only from the attempt count its send started at, still pending (another send that got there first, or a
 * manual retry's reopening, wins); its attempt is logged either way. Answers the ids that moved.
 */
export async function recordAttemptOutcomes(
  db: Db,
  outcomes: AttemptOutcome[],
  health: EndpointHealthState[] = [],
): Promise<string[]> {
  if (outcomes.length === 0 && health.length === 0) return [];
  const rows = await fastQuery<{ id: string }>(
    db,
    `with outcome as (
       select * from jsonb_to_recordset($1::jsonb) as o(
         delivery_id uuid, attempt int, status text, next_attempt_at timestamptz, status_code int, latency_ms int,
           error text, response_body text)
     ), health as (
       -- In endpoint order, so two workers writing the same endpoints lock them in the same order.
       insert into webhook_endpoint_health as h (endpoint_id, allowed, failing, updated_at)
       select s.endpoint_id, s.allowed, s.failing, clock_timestamp()
         from jsonb_to_recordset($2::jsonb) as s(endpoint_id uuid, allowed int, failing boolean)
         join webhook_endpoints e on e.id = s.endpoint_id
        order by s.endpoint_id
       on conflict (endpoint_id) do update set allowed = excluded.allowed, failing = excluded.failing,
         updated_at = excluded.updated_at
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
    [JSON.stringify(outcomes), JSON.stringify(health)],
  );
  return rows.map((r) => r.id);
}

/** What the webhooks workers together learned of an endpoint from its last answers (D-70, issue 20). */
export interface EndpointHealthState {
  endpoint_id: string;
  /** Sends it may have in flight in one worker. */
  allowed: number;
  /** Its last attempt failed. */
  failing: boolean;
}

/** Endpoint health written after `since` (by any worker), with when it was written. */
export async function endpointHealthSince(
  db: Db,
  since: Date,
): Promise<Array<EndpointHealthState & { updated_at: Date }>> {
  return fastQuery(
    db,
    'select endpoint_id, allowed, failing, updated_at from webhook_endpoint_health where updated_at > $1',
    [since],
    'webhooks.health-since',
  );
}

/** Puts a delivery back to pending, due now, for a manual redelivery. */
export async function reopenDelivery(db: Db, id: string): Promise<void> {
  await db('webhook_deliveries')
    .where({ id })
    .update({
      status: 'pending',
      next_attempt_at: db.raw('clock_timestamp()'),
      updated_at: db.raw('clock_timestamp()'),
    });
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
    .orderBy([
      { column: 'webhook_deliveries.created_at', order: 'desc' },
      { column: 'webhook_deliveries.id', order: 'desc' },
    ])
    .select([...deliveryColumns, 'webhook_endpoints.url as endpoint_url']);
}
