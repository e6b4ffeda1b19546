import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex.ts';
import type { PageQuery } from '../http/schemas.ts';
import { insertEvent, insertEvents, listEventRows, type EventRow } from './repo.ts';
import type { EventType } from './types.ts';

/** `evt_` + 24 random base32-ish characters (120 bits). */
export function newEventId(): string {
  return `evt_${randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
}

type EventListener = (db: Db, event: EventRow) => Promise<void>;
const listeners: EventListener[] = [];
type EventsListener = (db: Db, events: EventRow[]) => Promise<void>;
const manyListeners: EventsListener[] = [];

/**
 * Registers work that must happen in the same transaction as every recorded event
 * (the outbound webhook fan-out registers here).
 */
export function onEventRecorded(listener: EventListener): void {
  listeners.push(listener);
}

/**
 * Registers work that must happen in the same transaction as recorded events, set-wise: called once
 * with every event of a `recordEvents` call (and with the one event of a `recordEvent` call).
 */
export function onEventsRecorded(listener: EventsListener): void {
  manyListeners.push(listener);
}

/**
 * Writes an event row on `db` (D-70). Call it with the transaction of the state change it
 * describes: the event exists exactly when the change does.
 */
export async function recordEvent(db: Db, type: EventType, data: Record<string, unknown>): Promise<EventRow> {
  const event = await insertEvent(db, { id: newEventId(), type, data });
  for (const listener of listeners) await listener(db, event);
  for (const listener of manyListeners) await listener(db, [event]);
  return event;
}

/**
 * `recordEvent` for many events at once (the lifecycle sweep's batches): one insert, in the order
 * given, and each listener once for all of them. Same transaction rule as recordEvent.
 */
export async function recordEvents(db: Db, events: { type: EventType; data: Record<string, unknown> }[]): Promise<EventRow[]> {
  const rows = await insertEvents(db, events.map((e) => ({ id: newEventId(), type: e.type, data: e.data })));
  if (rows.length === 0) return rows;
  for (const listener of listeners) for (const event of rows) await listener(db, event);
  for (const listener of manyListeners) await listener(db, rows);
  return rows;
}

export function listEvents(db: Db, page: PageQuery, type?: string) {
  return listEventRows(db, page, type);
}
