import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';
import { DELIVERIES_DUE_CHANNEL } from '../events/fanout.ts';

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

/** Every endpoint's stored secrets (the release step seals them), locked when asked. */
export async function listEndpointSecretRows(
  db: Db,
  options: { lock?: boolean } = {},
): Promise<Pick<EndpointRow, 'id' | 'secret' | 'previous_secret'>[]> {
  const query = db('webhook_endpoints').select('id', 'secret', 'previous_secret').orderBy('id');
  return options.lock ? query.forUpdate() : query;
}

/** Stores an endpoint's secrets as given (sealed again), nothing else: not a change an admin made. */
export async function updateEndpointSecretColumns(
  db: Db,
  id: string,
  stored: Pick<EndpointRow, 'secret' | 'previous_secret'>,
): Promise<void> {
  await db('webhook_endpoints').where({ id }).update(stored);
}

export async function deleteEndpointRow(db: Db, id: string): Promise<number> {
  return db('webhook_endpoints').where({ id }).delete();
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
export { DELIVERIES_DUE_CHANNEL };

/** Tells listening webhook workers that deliveries are due; inside a transaction it is sent on commit. */
export async function notifyDeliveriesDue(db: Db): Promise<void> {
  await db.raw('select pg_notify(?, null)', [DELIVERIES_DUE_CHANNEL]);
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
