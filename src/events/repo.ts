import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * Events in the order given, with their webhook deliveries (fanout.ts: one pending delivery, due now, per event and
 * enabled endpoint subscribed to its type or to `*`) and, when there is any delivery, a notify on `channel`, which
 * listeners hear at commit. One set-wise insert of an event and what it causes: each event's created_at default,
 * clock_timestamp(), is taken as its row is inserted, so they list in that order; the deliveries are made from the
 * inserted events' (id, type).
 */
export async function insertEventsWithDeliveries(
  db: Db,
  rows: { id: string; type: string; data: unknown }[],
  channel: string,
  alongside?: Knex.Raw,
): Promise<void> {
  if (rows.length === 0) return;
  await db.raw(
    `with ${alongside ? 'alongside as (?), ' : ''}recorded as (
       insert into events (id, type, data)
       select v.id, v.type, v.data
         from rows from (jsonb_to_recordset(?::jsonb) as (id text, type text, data jsonb))
              with ordinality as v(id, type, data, n)
        order by v.n
       returning id, type
     ), delivered as (
       insert into webhook_deliveries (endpoint_id, event_id)
       select e.id, r.id
         from recorded r
         join webhook_endpoints e on e.enabled and e.events && array[r.type, '*']::text[]
       returning 1
     )
     select pg_notify(?, null) from (select 1 from delivered limit 1) as any_delivery`,
    [...(alongside ? [alongside] : []), JSON.stringify(rows), channel],
  );
}

export async function listEventRows(db: Db, page: PageQuery, type?: string): Promise<Page<EventRow>> {
  const query = db('events').select('*');
  if (type) query.where({ type });
  return paginate<EventRow>(query, 'events', page);
}

export async function findEventRow(db: Db, id: string): Promise<EventRow | undefined> {
  return db('events').where({ id }).first();
}

/** The newest `limit` events whose data names this invoice (the expression index events_invoice_id). */
export async function listEventRowsOfInvoice(db: Db, invoiceId: string, limit: number): Promise<EventRow[]> {
  return db('events')
    .whereRaw(`(data->>'invoiceId') = ?`, [invoiceId])
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit);
}

/**
 * Events whose payload names the customer (`data.customerId`: invoice, payment, license, dunning and
 * subscription payloads all carry it), through the expression index `events_customer`.
 */
export async function listEventRowsOfCustomer(db: Db, customerId: string, page: PageQuery): Promise<Page<EventRow>> {
  return paginate<EventRow>(
    db('events').select('*').whereRaw(`(data->>'customerId') = ?`, [customerId]),
    'events',
    page,
  );
}

/**
 * The newest `limit` events about one subscription (subscription.* carry its id, invoice.* its
 * subscriptionId), found among its customer's events through the expression index `events_customer`.
 */
export async function listEventRowsOfSubscription(
  db: Db,
  subscription: { id: string; customerId: string },
  limit: number,
): Promise<EventRow[]> {
  return db('events')
    .whereRaw(`(data->>'customerId') = ?`, [subscription.customerId])
    .where((q) =>
      q.whereRaw(`(data->>'id') = ?`, [subscription.id]).orWhereRaw(`(data->>'subscriptionId') = ?`, [subscription.id]),
    )
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit);
}

/** When the newest event was recorded (the events_created index), or null when there is none. */
export async function latestEventTime(db: Db): Promise<Date | null> {
  const row = await db('events')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first('created_at');
  return row?.created_at ?? null;
}
