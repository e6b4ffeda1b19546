import { pooledRandomBytes } from '../crypto/ids.ts';
import type { Db } from '../db/knex.ts';
import type { PageQuery } from '../http/schemas.ts';
import { textLiteral } from '../db/literal.ts';
import { fanOutPart, fanOutPartOf } from '../webhooks/fanout.ts';
import {
  eventsInsertFromSql,
  eventsInsertSql,
  insertDeliveriesAhead,
  insertEventsQuietly,
  insertEventsWith,
  latestEventTime,
  listEventRows,
  listEventRowsOfCustomer,
  listEventRowsOfInvoice,
  listEventRowsOfSubscription,
  type EventRow,
} from './repo.ts';
import type { EventType } from './types.ts';

/** `evt_` + 24 random base32-ish characters (120 bits). */
export function newEventId(): string {
  return `evt_${pooledRandomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** `n` event ids (a sweep batch names hundreds), from the pooled randomness of newEventId. */
export function newEventIds(n: number): string[] {
  return Array.from({ length: n }, () => newEventId());
}

/**
 * Writes an event row on `db` (D-70) and its webhook deliveries, in one statement. Call it with the transaction of the
 * state change it describes: the event, and its deliveries, exist exactly when the change does.
 */
export async function recordEvent(db: Db, type: EventType, data: Record<string, unknown>): Promise<EventRow> {
  const [event] = await insertEventsWith(db, [{ id: newEventId(), type, data }], fanOutPart);
  return event!;
}

/**
 * `recordEvent` for many events at once (the lifecycle sweep's batches): one insert, in the order
 * given, with the fan-out for all of them, in one statement. Same transaction rule as recordEvent. Nothing is
 * read back (no caller needs the rows, and hundreds of payloads would come back to be parsed). An event may
 * carry the id it was given by `fanOutAhead` (its deliveries are written already).
 */
export async function recordEvents(
  db: Db,
  events: { id?: string; type: EventType; data: Record<string, unknown> }[],
): Promise<void> {
  const fresh = newEventIds(events.filter((e) => !e.id).length);
  const toFanOut: string[] = [];
  const rows = events.map((e) => {
    if (e.id) return { id: e.id, type: e.type, data: e.data };
    const id = fresh[toFanOut.length]!;
    toFanOut.push(id);
    return { id, type: e.type, data: e.data };
  });
  await insertEventsQuietly(db, rows, toFanOut, fanOutPart);
}

/**
 * The webhook deliveries of events the caller will record later in the same transaction (recordEvents with
 * these ids): a caller that must write the events under a lock (the sweep's invoice.created carry invoice
 * numbers) writes their deliveries before taking it. Ids from `newEventIds`. The deliveries commit only with
 * their events (their foreign key is checked at commit).
 */
export async function fanOutAhead(db: Db, events: { id: string; type: EventType }[]): Promise<void> {
  await insertDeliveriesAhead(db, events, fanOutPart);
}

/**
 * Events as a part of another statement: its CTEs, the JSON of the rows to supply as `param`, and the CTE its final
 * select must read.
 */
export interface EventsPart {
  text: string;
  value: string;
  /** A one-row CTE (the fan-out's notify): the statement's final select must read it (cross join), or it never runs. */
  read: string;
}

/**
 * `recordEvents` as CTEs of the statement that makes the change (the last statement of an invoice creation,
 * invoices/issue.ts), so the events and their deliveries commit with it in one round trip. `param` is SQL
 * yielding the events' rows as jsonb (the caller builds it from `value`, the rows' JSON: it may put the
 * invoice number into them there); the channel is written as a literal, so the part needs no bind parameters.
 */
export function recordEventsPart(
  events: { type: EventType; data: Record<string, unknown> }[],
  param: string,
): EventsPart {
  const fanOut = fanOutPartOf('recorded_events', textLiteral);
  return {
    text: `recorded_events as (${eventsInsertSql(param)}), ${fanOut.text}`,
    value: JSON.stringify(events.map((e) => ({ id: newEventId(), type: e.type, data: e.data }))),
    read: 'notified',
  };
}

/**
 * recordEvents as CTEs of another statement that computes the events' rows itself (`source`: SQL of rows (id, type,
 * data jsonb, n), recorded in the order of n), such as the last statement of a sweep batch (invoices/issue.ts
 * numberInvoicesLast), which puts the invoice numbers into the payloads. Only the events named in `toFanOut` get their
 * webhook deliveries here; the others had them written ahead (fanOutAhead). No bind parameters (literals only).
 */
export function recordEventsFromPart(source: string, toFanOut: string[]): { text: string; read: string } {
  const fanOut = fanOutPartOf('unfanned', textLiteral);
  const ids = `array[${toFanOut.map(textLiteral).join(', ')}]::text[]`;
  return {
    text:
      `recorded_events as (${eventsInsertFromSql(source)}), unfanned as (select r.id, r.type from ` +
      `recorded_events r where r.id = any(${ids})), ${fanOut.text}`,
    read: 'notified',
  };
}

export function listEvents(db: Db, page: PageQuery, type?: string) {
  return listEventRows(db, page, type);
}

/** An invoice's events (invoice.*, payment.* naming it), newest first, at most `limit`. */
export function listInvoiceEvents(db: Db, invoiceId: string, limit = 100): Promise<EventRow[]> {
  return listEventRowsOfInvoice(db, invoiceId, limit);
}

/** A subscription's events (its own and its invoices'), newest first, at most `limit`. */
export function listSubscriptionEvents(
  db: Db,
  subscription: { id: string; customerId: string },
  limit = 100,
): Promise<EventRow[]> {
  return listEventRowsOfSubscription(db, subscription, limit);
}

/** The customer's events (its timeline), paged as any list. */
export function listCustomerEvents(db: Db, customerId: string, page: PageQuery) {
  return listEventRowsOfCustomer(db, customerId, page);
}

/**
 * When the newest event was recorded: every billing change records one in its transaction, so a figure
 * derived from the billing tables is unchanged while this is.
 */
export function lastEventAt(db: Db): Promise<Date | null> {
  return latestEventTime(db);
}
