import type { Knex } from 'knex';
import { newEventIdBody } from '../crypto/ids.ts';
import { customerClockIds } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import type { PageQuery } from '../db/paginate.ts';
import { DELIVERIES_DUE_CHANNEL } from './fanout.ts';
import {
  insertEventsWithDeliveries,
  latestEventTime,
  listEventRows,
  listEventRowsOfCustomer,
  listEventRowsOfInvoice,
  listEventRowsOfSubscription,
  type EventRow,
} from './repo.ts';
import type { EventType } from './types.ts';

/** `evt_` + 24 base32 characters: time-ordered, 70 of their bits random (crypto/ids.ts). */
function newEventId(): string {
  return `evt_${newEventIdBody()}`;
}

/** What happened, as the domain that made the change states it (D-74 payloads). */
export interface NewEvent {
  type: EventType;
  data: Record<string, unknown>;
}

/** An event as recorded: its new id and its type. */
export interface RecordedEvent {
  id: string;
  type: EventType;
}

/**
 * Records events (D-70) in the order given, one or many (a sweep batch records hundreds), with their webhook
 * deliveries (fanout.ts), by one insert. Call it with the transaction of the change they describe: the events and
 * their deliveries exist exactly when the change does. Answers each event's id and type, in order. `alongside`
 * (another write's statement, e.g. audit/service.ts auditStatement) runs in the same statement: one round trip less
 * where a lock is held until the commit (invoices/service.ts says where).
 */
export async function recordEvents(trx: Db, events: NewEvent[], alongside?: Knex.Raw): Promise<RecordedEvent[]> {
  if (events.length === 0) {
    if (alongside) await alongside;
    return [];
  }
  // TC-5: an event of a customer on a test clock names the clock, so an integration can tell test events apart.
  const clocks = await customerClockIds(
    trx,
    events.flatMap((e) => (typeof e.data.customerId === 'string' ? [e.data.customerId] : [])),
  );
  const rows = events.map((e) => {
    const clock = typeof e.data.customerId === 'string' ? clocks.get(e.data.customerId) : undefined;
    return { id: newEventId(), type: e.type, data: clock ? { ...e.data, testClock: clock } : e.data };
  });
  await insertEventsWithDeliveries(trx, rows, DELIVERIES_DUE_CHANNEL, alongside);
  return rows.map(({ id, type }) => ({ id, type }));
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
