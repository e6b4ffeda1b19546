import type { Db } from '../db/knex.ts';
import { fastQuery } from '../db/fast-query.ts';
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

/** One pending delivery per enabled endpoint subscribed to the event's type or to '*', in one statement. */
export async function insertDeliveriesForEvent(db: Db, event: Pick<EventRow, 'id' | 'type'>): Promise<{ id: string }[]> {
  const result = await db.raw(
    `insert into webhook_deliveries (endpoint_id, event_id)
     select id, ? from webhook_endpoints where enabled and events && array[?, '*']::text[]
     on conflict (endpoint_id, event_id) do nothing
     returning id`,
    [event.id, event.type],
  );
  return result.rows as { id: string }[];
}

/** `insertDeliveriesForEvent` for many events in one statement. */
export async function insertDeliveriesForEvents(db: Db, events: Pick<EventRow, 'id' | 'type'>[]): Promise<{ id: string }[]> {
  if (events.length === 0) return [];
  const result = await db.raw(
    `insert into webhook_deliveries (endpoint_id, event_id)
     select e.id, v.id
       from jsonb_to_recordset(?::jsonb) as v(id text, type text)
       join webhook_endpoints e on e.enabled and e.events && array[v.type, '*']::text[]
     on conflict (endpoint_id, event_id) do nothing
     returning id`,
    [JSON.stringify(events.map((e) => ({ id: e.id, type: e.type })))],
  );
  return result.rows as { id: string }[];
}

const deliveryColumns = ['webhook_deliveries.*', 'events.type as event_type'];

export async function findDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries').join('events', 'events.id', 'webhook_deliveries.event_id').where('webhook_deliveries.id', id).first(deliveryColumns);
}

/** What one send needs: the delivery, its endpoint and its event, read fresh by the job. */
export async function findDeliveryTarget(db: Db, id: string) {
  const row = await db('webhook_deliveries as d')
    .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .join('events as ev', 'ev.id', 'd.event_id')
    .where('d.id', id)
    .first(
      'd.id', 'd.status', 'd.attempt_count', 'e.url', 'e.secret', 'e.enabled',
      'ev.id as event_id', 'ev.type as event_type', 'ev.data as event_data', 'ev.created_at as event_created_at',
    );
  return row as
    | { id: string; status: DeliveryStatus; attempt_count: number; url: string; secret: string; enabled: boolean; event_id: string; event_type: string; event_data: Record<string, unknown>; event_created_at: Date }
    | undefined;
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

export async function insertAttempt(db: Db, row: Omit<AttemptRow, 'at'>): Promise<void> {
  await db('webhook_delivery_attempts').insert(row);
}

/**
 * A successful attempt in one statement (atomic on its own, no transaction round trips): the attempt is
 * logged and the delivery marked delivered, unless another send already moved it past `row.attempt - 1`.
 */
export async function recordDeliveredAttempt(db: Db, row: Omit<AttemptRow, 'at'>): Promise<void> {
  await fastQuery(
    db,
    `with logged as (
       insert into webhook_delivery_attempts (delivery_id, attempt, status_code, latency_ms, error, response_body)
       values ($1, $2, $3, $4, $5, $6)
     )
     update webhook_deliveries
        set attempt_count = $7, status = 'delivered', next_attempt_at = null, delivered_at = clock_timestamp(), updated_at = clock_timestamp()
      where id = $8 and attempt_count = $9 and status = 'pending'`,
    [row.delivery_id, row.attempt, row.status_code, row.latency_ms, row.error, row.response_body, row.attempt, row.delivery_id, row.attempt - 1],
  );
}

/**
 * Moves a delivery past attempt `attemptsBefore` (optimistic: 0 rows when another send already did,
 * so only one attempt chain schedules the next).
 */
export async function advanceDelivery(
  db: Db,
  id: string,
  attemptsBefore: number,
  next: { status: DeliveryStatus; nextAttemptAt: Date | null },
): Promise<boolean> {
  const count = await db('webhook_deliveries')
    .where({ id, attempt_count: attemptsBefore, status: 'pending' })
    .update({
      attempt_count: attemptsBefore + 1,
      status: next.status,
      next_attempt_at: next.nextAttemptAt,
      delivered_at: next.status === 'delivered' ? db.raw('clock_timestamp()') : null,
      updated_at: db.raw('clock_timestamp()'),
    });
  return count > 0;
}

/** Puts a delivery back to pending for a manual redelivery; returns its attempt count. */
export async function reopenDelivery(db: Db, id: string, endpointId: string): Promise<number | undefined> {
  const [row] = await db('webhook_deliveries')
    .where({ id, endpoint_id: endpointId })
    .update({ status: 'pending', next_attempt_at: db.raw('clock_timestamp()'), updated_at: db.raw('clock_timestamp()') })
    .returning('attempt_count');
  return (row as { attempt_count: number } | undefined)?.attempt_count;
}
