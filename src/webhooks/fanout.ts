import { DELIVERIES_DUE_CHANNEL, dueDeliveriesCtes } from './repo.ts';

/** The fan-out as a part of the statement that inserts the events (`?` placeholders, bound in this order). */
export interface FanOutPart {
  /** CTEs `delivered` and `notified`; `notified` is one row and must be read by the statement's final select. */
  text: string;
  /** The channel's binding, after the events' jsonb (the same value as the events insert's). */
  channel: string;
}

/**
 * One pending delivery per (event, subscribed endpoint), due now, set-wise: part of the one statement that
 * inserts the events (events/repo.ts insertEventsWith), however many events (a lifecycle batch records hundreds),
 * and a notify of the webhook workers, who hear it when the transaction commits. The deliveries table is the
 * queue (workers claim due rows from it), so nothing else is written: a delivery exists, and will be sent,
 * exactly when its event does, and the event and its deliveries cost one round trip.
 */
export function fanOutPart(): FanOutPart {
  return fanOutPartOf('?', '?');
}

/**
 * fanOutPart with the events' jsonb and the channel given as SQL (an expression, a literal) instead of `?`
 * placeholders: for a statement sent without bind parameters (db/hot-lock.ts `finish`).
 */
export function fanOutPartOf(eventsSql: string, channelSql: string): FanOutPart {
  return { text: dueDeliveriesCtes(eventsSql, channelSql), channel: DELIVERIES_DUE_CHANNEL };
}
