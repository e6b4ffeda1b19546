import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex.ts';
import type { PageQuery } from '../http/schemas.ts';
import { insertEvent, listEventRows, type EventRow } from './repo.ts';
import type { EventType } from './types.ts';

/** `evt_` + 24 random base32-ish characters (120 bits). */
export function newEventId(): string {
  return `evt_${randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
}

type EventListener = (db: Db, event: EventRow) => Promise<void>;
const listeners: EventListener[] = [];

/**
 * Registers work that must happen in the same transaction as every recorded event
 * (the outbound webhook fan-out registers here).
 */
export function onEventRecorded(listener: EventListener): void {
  listeners.push(listener);
}

/**
 * Writes an event row on `db` (D-70). Call it with the transaction of the state change it
 * describes: the event exists exactly when the change does.
 */
export async function recordEvent(db: Db, type: EventType, data: Record<string, unknown>): Promise<EventRow> {
  const event = await insertEvent(db, { id: newEventId(), type, data });
  for (const listener of listeners) await listener(db, event);
  return event;
}

export function listEvents(db: Db, page: PageQuery, type?: string) {
  return listEventRows(db, page, type);
}
