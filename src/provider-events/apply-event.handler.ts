import { defineJobHandler } from '../queue/job.ts';
import { APPLY_PROVIDER_EVENT_RETRY_LIMIT, applyProviderEventJob } from './apply-event.job.ts';
import { applyProviderEvent, giveUpProviderEvent } from './service.ts';

export const applyProviderEventHandler = defineJobHandler(applyProviderEventJob, {
  async run(deps, payload, job) {
    try {
      const event = await applyProviderEvent(deps.db, payload.eventId, new Date(), deps.logger);
      return { status: event?.status ?? 'missing' };
    } catch (error) {
      if (job.retryCount < APPLY_PROVIDER_EVENT_RETRY_LIMIT) throw error;
      const event = await giveUpProviderEvent(
        deps.db,
        payload.eventId,
        error instanceof Error ? error.message : String(error),
      );
      deps.logger.error({ err: error, providerEvent: payload.eventId }, 'provider event failed after its last retry');
      return { status: event?.status ?? 'missing' };
    }
  },
});
