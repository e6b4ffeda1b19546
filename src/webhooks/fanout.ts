import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { EventRow } from '../events/repo.ts';
import { onEventsRecorded } from '../events/service.ts';
import { deliverWebhookJob } from './deliver.job.ts';
import { insertDueDeliveries } from './repo.ts';

/**
 * One pending delivery per (event, subscribed endpoint), due now, set-wise: one statement inserts the
 * deliveries however many events (a lifecycle batch records hundreds) and notifies the webhook workers, who
 * hear it when the transaction commits. The deliveries table is the queue (workers claim due rows from it),
 * so nothing else is written: a delivery exists, and will be sent, exactly when its event does.
 * Call it in the events' transaction so the deliveries commit with them.
 */
export async function fanOutEvents(trx: Db, events: Pick<EventRow, 'id' | 'type'>[]): Promise<number> {
  return insertDueDeliveries(trx, events);
}

// Importing this module registers the fan-out. The job registry imports the delivery job from here, so
// every process that records events (web, workers) fans out; the webhook routes import it too.
// Events are recorded in the transaction of their state change, so deliveries commit with it; the
// inTransaction only matters for a caller that records outside one.
onEventsRecorded(async (db, events) => {
  await inTransaction(db, (trx) => fanOutEvents(trx, events));
});

export { deliverWebhookJob };
