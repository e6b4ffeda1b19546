import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

const payload = z.object({
  /** The delivery that became due, when one did (informational: the worker claims whatever is due). */
  deliveryId: z.uuid().optional(),
});

/**
 * The webhooks worker group. Deliveries are claimed from `webhook_deliveries` itself by each process's
 * dispatcher (src/webhooks/dispatcher.ts), woken by the NOTIFY a fan-out or redelivery commits, by its own
 * timers for the retries it scheduled, and by a poll. This job is only a durable "deliveries are due" wake-up
 * (a job queued before the dispatcher existed lands here too); its handler starts the dispatcher with the group.
 */
export const deliverWebhookJob = defineJob({
  name: 'webhooks.deliver',
  group: 'webhooks',
  payload,
  queue: { retryLimit: 2, retryDelay: 5, expireInSeconds: 20, notify: true },
  concurrency: 1,
  batchSize: 100,
});

export type DeliverPayload = z.output<typeof payload>;
