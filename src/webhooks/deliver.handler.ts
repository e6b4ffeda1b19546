import { defineJobHandler } from '../queue/job.ts';
import { deliverWebhookJob } from './deliver.job.ts';
import { startDeliveryDispatcher, wakeDeliveryDispatcher } from './dispatcher.ts';

export const deliverWebhookHandler = defineJobHandler(deliverWebhookJob, {
  background: (deps) => startDeliveryDispatcher(deps),
  run: async () => {
    wakeDeliveryDispatcher();
    return { outcome: 'woken' };
  },
});
