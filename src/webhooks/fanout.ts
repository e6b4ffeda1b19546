import { fromKnex } from 'pg-boss';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import type { EventRow } from '../events/repo.ts';
import { onEventsRecorded } from '../events/service.ts';
import { getBoss } from '../queue/boss.ts';
import { deliverWebhookJob } from './deliver.job.ts';
import { insertDeliveriesForEvents } from './repo.ts';

/**
 * One pending delivery per (event, subscribed endpoint) and its first attempt's job, set-wise: one insert
 * of the deliveries and one insert of their jobs, however many events (a lifecycle batch records hundreds).
 * Call it in the events' transaction so deliveries and jobs commit with them.
 */
export async function fanOutEvents(trx: Db, events: Pick<EventRow, 'id' | 'type'>[]): Promise<number> {
  const deliveries = await insertDeliveriesForEvents(trx, events);
  if (deliveries.length === 0) return 0;
  const jobs = deliveries.map((d) => ({ data: deliverWebhookJob.payload.parse({ deliveryId: d.id, attempt: 0 }) }));
  // insert() takes the queue's options (retries, expiry, notify) as send() does, in one statement.
  await getBoss().insert(deliverWebhookJob.name, jobs, { db: fromKnex(trx) });
  return deliveries.length;
}

// Importing this module registers the fan-out. The job registry imports the delivery job from here, so
// every process that records events (web, workers) fans out; the webhook routes import it too.
// Events are recorded in the transaction of their state change, so deliveries and jobs commit with it; the
// inTransaction only matters for a caller that records outside one (deliveries and jobs still go together).
onEventsRecorded(async (db, events) => {
  await inTransaction(db, (trx) => fanOutEvents(trx, events));
});

export { deliverWebhookJob };
