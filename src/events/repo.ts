import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** The fan-out CTEs that end an events insert, given the name of the CTE holding the inserted events' (id, type). */
export type FanOut = (events: string) => { text: string; channel: string };

/**
 * Many events in one statement, in the order given (each row's created_at default, clock_timestamp(), is taken as
 * the row is produced, so they list in that order), ended by `fanOut`'s CTEs, which read the inserted events'
 * (id, type) from the CTE `inserted`: the events and what they cause are one round trip, and the events' jsonb
 * is parsed once. `answer: false` (a batch whose caller reads nothing back) brings back no rows: no payload
 * sent back, parsed and rebuilt in this process.
 */
function insertEventsSql(fanOut: { text: string }, answer: boolean): string {
  return `with inserted as (${eventsInsertSql('?', answer ? '*' : 'id, type')}), ${fanOut.text}
     ${answer ? 'select inserted.* from inserted cross join notified' : 'select n from notified'}`;
}

export async function insertEventsWith(
  db: Db,
  rows: { id: string; type: string; data: unknown }[],
  fanOut: FanOut,
): Promise<EventRow[]> {
  if (rows.length === 0) return [];
  const part = fanOut('inserted');
  const result = await db.raw<{ rows: EventRow[] }>(insertEventsSql(part, true), [JSON.stringify(rows), part.channel]);
  // The join does not promise an order: answer in the order given.
  const byId = new Map(result.rows.map((row) => [row.id, row]));
  return rows.map((row) => byId.get(row.id)!);
}

/**
 * insertEventsWith for callers that read nothing back (a sweep batch's hundreds of events). Only the events named
 * in `toFanOut` get their deliveries here; the others had them written ahead (insertDeliveriesAhead).
 */
export async function insertEventsQuietly(
  db: Db,
  rows: { id: string; type: string; data: unknown }[],
  toFanOut: string[],
  fanOut: FanOut,
): Promise<void> {
  if (rows.length === 0) return;
  const part = fanOut('unfanned');
  // The statement begins with its insert (what runs under the numbering lock only writes); the events still to
  // fan out are joined by id (a hash join, not a scan of the list per row).
  await db.raw(
    `with inserted as (${eventsInsertSql('?', 'id, type')}), unfanned as (
       select i.id, i.type from inserted i join unnest(?::text[]) as u(id) on u.id = i.id
     ), ${part.text}
     select n from notified`,
    [JSON.stringify(rows), toFanOut, part.channel],
  );
}

/**
 * The deliveries of events not yet written, whose ids the caller chose and will write with insertEventsQuietly
 * (`fanned`) in the same transaction: written before, outside the invoice numbering lock (the sweep). The
 * deliveries' foreign key to their event is checked at commit, so a delivery without its event cannot commit.
 */
export async function insertDeliveriesAhead(
  db: Db,
  events: { id: string; type: string }[],
  fanOut: FanOut,
): Promise<void> {
  if (events.length === 0) return;
  const part = fanOut('ahead');
  await db.raw(
    `with ahead as (select * from jsonb_to_recordset(?::jsonb) as v(id text, type text)), ${part.text}
     select n from notified`,
    [JSON.stringify(events), part.channel],
  );
}

/**
 * The insert of the events held by the jsonb SQL `param` (`?`, or an expression), in the order given, returning
 * `returning`.
 */
export function eventsInsertSql(param: string, returning = '*'): string {
  return `insert into events (id, type, data)
       select v.id, v.type, v.data
         from rows from (jsonb_to_recordset(${param}::jsonb) as (id text, type text, data jsonb)) with ordinality
           as v(id, type, data, n)
        order by v.n
       returning ${returning}`;
}

/**
 * The insert of events whose rows come from the SQL `source`, a set of (id text, type text, data jsonb, n) in the
 * order of `n` (a statement that computes the payloads, such as the sweep's numbered write), returning (id, type).
 */
export function eventsInsertFromSql(source: string): string {
  return `insert into events (id, type, data)
       select v.id, v.type, v.data from (${source}) as v order by v.n
       returning id, type`;
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
