/**
 * The webhooks workers' statements (D-70): claiming due deliveries, recording what their attempts answered,
 * and the endpoint health every worker shares. The deliveries table is the queue; the admin side of the same
 * tables is in repo.ts.
 */
import type { Db } from '../db/knex.ts';
import type { DeliveryStatus } from './repo.ts';

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
 * One statement because the candidates must stay locked from the pick to the update that claims them.
 */
export async function claimDueDeliveries(db: Db, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const result = await db.raw<{ rows: ClaimedDelivery[] }>(
    `with candidate as (
       select d.id, d.endpoint_id, d.next_attempt_at
         from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at is not null and d.next_attempt_at <= clock_timestamp()
          and d.endpoint_id <> all(cast(:full as uuid[]))
        order by d.next_attempt_at
        limit :candidates
        for update of d skip locked
     ), ranked as (
       select c.id, c.next_attempt_at, c.endpoint_id = any(cast(:failing as uuid[])) as failing,
              row_number() over (partition by c.endpoint_id order by c.next_attempt_at, c.id) as n,
              coalesce(cast(cast(:room as jsonb) ->> cast(c.endpoint_id as text) as int), cast(:defaultRoom as int))
                as room
         from candidate c
     ), allowed as (
       select id, next_attempt_at, failing, row_number() over (partition by failing order by next_attempt_at, id) as k
         from ranked where n <= room
     ), chosen as (
       select id from allowed where not failing or k <= :failingRoom order by next_attempt_at limit :limit
     )
     update webhook_deliveries d
        set next_attempt_at = case
              when e.enabled then clock_timestamp() + cast(:leaseMs as int) * interval '1 millisecond'
            end
       from chosen, webhook_endpoints e, events ev
      where d.id = chosen.id and e.id = d.endpoint_id and ev.id = d.event_id
     returning d.id, d.endpoint_id, d.attempt_count, e.enabled, e.url, e.secret,
               case when e.previous_secret_expires_at > clock_timestamp() then e.previous_secret end as previous_secret,
               ev.id as event_id, ev.type as event_type, ev.data as event_data, ev.created_at as event_created_at`,
    {
      full: limits.full,
      // Twice the slots: some candidates may be over their endpoint's room and dropped by `ranked`.
      candidates: limits.limit * 2,
      failing: limits.failing,
      room: JSON.stringify(limits.room),
      defaultRoom: limits.defaultRoom,
      failingRoom: limits.failingRoom,
      limit: limits.limit,
      leaseMs: Math.round(limits.leaseMs),
    },
  );
  return result.rows;
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

/** What the webhooks workers together learned of an endpoint from its last answers (D-70, issue 20). */
export interface EndpointHealthState {
  endpoint_id: string;
  /** Sends it may have in flight in one worker. */
  allowed: number;
  /** Its last attempt failed. */
  failing: boolean;
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
  const result = await db.raw<{ rows: { id: string }[] }>(
    `with outcome as (
       select * from jsonb_to_recordset(cast(:outcomes as jsonb)) as o(
         delivery_id uuid, attempt int, status text, next_attempt_at timestamptz, status_code int, latency_ms int,
         error text, response_body text)
     ), health as (
       -- In endpoint order, so two workers writing the same endpoints lock them in the same order.
       insert into webhook_endpoint_health as h (endpoint_id, allowed, failing, updated_at)
       select s.endpoint_id, s.allowed, s.failing, clock_timestamp()
         from jsonb_to_recordset(cast(:health as jsonb)) as s(endpoint_id uuid, allowed int, failing boolean)
         join webhook_endpoints e on e.id = s.endpoint_id
        order by s.endpoint_id
       on conflict (endpoint_id) do update
          set allowed = excluded.allowed, failing = excluded.failing, updated_at = excluded.updated_at
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
    { outcomes: JSON.stringify(outcomes), health: JSON.stringify(health) },
  );
  return result.rows.map((r) => r.id);
}

/** Endpoint health written after `since` (by any worker), with when it was written. */
export function endpointHealthSince(db: Db, since: Date): Promise<Array<EndpointHealthState & { updated_at: Date }>> {
  return db('webhook_endpoint_health')
    .where('updated_at', '>', since)
    .select('endpoint_id', 'allowed', 'failing', 'updated_at');
}
