import type { Db } from '../db/knex.ts';
import type { EventRow } from '../events/repo.ts';
import { insertDueDeliveries } from './repo.ts';

/**
 * One pending delivery per (event, subscribed endpoint), due now, set-wise: one statement inserts the
 * deliveries however many events (a lifecycle batch records hundreds) and notifies the webhook workers, who
 * hear it when the transaction commits. The deliveries table is the queue (workers claim due rows from it),
 * so nothing else is written: a delivery exists, and will be sent, exactly when its event does.
 * recordEvent and recordEvents call it on the events' own `db`, so the deliveries commit with them.
 */
export async function fanOutEvents(db: Db, events: Pick<EventRow, 'id' | 'type'>[]): Promise<number> {
  return insertDueDeliveries(db, events);
}
