import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * Many events in one statement, in the order given (each row's created_at default, clock_timestamp(), is taken as
 * the row is produced, so they list in that order), ended by `fanOut`'s CTEs, which read the same events' (id,
 * type) from a second binding of the same jsonb: the events and what they cause are one round trip.
 */
export async function insertEventsWith(db: Db, rows: { id: string; type: string; data: unknown }[], fanOut: { text: string; channel: string }): Promise<EventRow[]> {
  if (rows.length === 0) return [];
  const json = JSON.stringify(rows);
  const result = await db.raw<{ rows: EventRow[] }>(
    `with inserted as (${eventsInsertSql('?')}), ${fanOut.text}
     select inserted.* from inserted cross join notified`,
    [json, json, fanOut.channel],
  );
  // The join does not promise an order: answer in the order given.
  const byId = new Map(result.rows.map((row) => [row.id, row]));
  return rows.map((row) => byId.get(row.id)!);
}

/** The insert of the events held by the jsonb SQL `param` (`?`, or an expression), in the order given, `returning *`. */
export function eventsInsertSql(param: string): string {
  return `insert into events (id, type, data)
       select v.id, v.type, v.data
         from rows from (jsonb_to_recordset(${param}::jsonb) as (id text, type text, data jsonb)) with ordinality as v(id, type, data, n)
        order by v.n
       returning *`;
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
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit);
}

/**
 * Events whose payload names the customer (`data.customerId`: invoice, payment, license, dunning and
 * subscription payloads all carry it), through the expression index `events_customer`.
 */
export async function listEventRowsOfCustomer(db: Db, customerId: string, page: PageQuery): Promise<Page<EventRow>> {
  return paginate<EventRow>(db('events').select('*').whereRaw(`(data->>'customerId') = ?`, [customerId]), 'events', page);
}

/**
 * The newest `limit` events about one subscription (subscription.* carry its id, invoice.* its
 * subscriptionId), found among its customer's events through the expression index `events_customer`.
 */
export async function listEventRowsOfSubscription(db: Db, subscription: { id: string; customerId: string }, limit: number): Promise<EventRow[]> {
  return db('events')
    .whereRaw(`(data->>'customerId') = ?`, [subscription.customerId])
    .where((q) => q.whereRaw(`(data->>'id') = ?`, [subscription.id]).orWhereRaw(`(data->>'subscriptionId') = ?`, [subscription.id]))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit);
}

/** When the newest event was recorded (the events_created index), or null when there is none. */
export async function latestEventTime(db: Db): Promise<Date | null> {
  const row = await db('events').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first('created_at');
  return row?.created_at ?? null;
}
