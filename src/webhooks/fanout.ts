import { inTransaction } from '../db/knex.ts';
import { onEventRecorded } from '../events/service.ts';
import { enqueue } from '../queue/enqueue.ts';
import { deliverWebhookJob } from './deliver.job.ts';
import { insertDeliveriesForEvent } from './repo.ts';

// Importing this module registers the fan-out. The job registry imports the delivery job from here, so
// every process that records events (web, workers) fans out; the webhook routes import it too.
// Events are recorded in the transaction of their state change, so deliveries and jobs commit with it; the
// inTransaction only matters for a caller that records outside one (deliveries and jobs still go together).
onEventRecorded((db, event) =>
  inTransaction(db, async (trx) => {
    const deliveries = await insertDeliveriesForEvent(trx, event);
    for (const delivery of deliveries) await enqueue(trx, deliverWebhookJob, { deliveryId: delivery.id, attempt: 0 });
  }),
);

export { deliverWebhookJob };
