import { DELIVERIES_DUE_CHANNEL, dueDeliveriesCtes } from './repo.ts';

/** The fan-out as a part of the statement that inserts the events (`?` placeholder, bound after the events'). */
export interface FanOutPart {
  /** CTEs `delivered` and `notified`; `notified` is one row and must be read by the statement's final select. */
  text: string;
  /** The channel's binding. */
  channel: string;
}

/**
 * One pending delivery per (event, subscribed endpoint), due now, set-wise: part of the one statement that
 * inserts the events (events/repo.ts insertEventsWith), reading the events' (id, type) from its CTE `events`,
 * however many events (a lifecycle batch records hundreds), and a notify of the webhook workers, who hear it
 * when the transaction commits. The deliveries table is the queue (workers claim due rows from it), so nothing
 * else is written: a delivery exists, and will be sent, exactly when its event does, and the event and its
 * deliveries cost one round trip.
 */
export function fanOutPart(events: string): FanOutPart {
  return fanOutPartOf(events, () => '?');
}

/**
 * fanOutPart with the channel written by `channelSql` (a literal) instead of a `?` placeholder: for a statement
 * sent without bind parameters (db/hot-lock.ts `finish`).
 */
export function fanOutPartOf(events: string, channelSql: (channel: string) => string): FanOutPart {
  return { text: dueDeliveriesCtes(events, channelSql(DELIVERIES_DUE_CHANNEL)), channel: DELIVERIES_DUE_CHANNEL };
}
