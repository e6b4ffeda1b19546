import { z } from 'zod';
import { defineJob } from '../queue/job.ts';
import { applyProviderEvent, giveUpProviderEvent } from './service.ts';

const RETRY_LIMIT = 10;

/**
 * Applies one stored provider event (D-62); retried with backoff while the database or a lock says no.
 * When the last retry fails too, the event is kept as `failed` with the error, listed and replayable.
 */
export const applyProviderEventJob = defineJob({
  name: 'provider-events.apply',
  group: 'provider_events',
  payload: z.object({ eventId: z.uuid() }),
  queue: { retryLimit: RETRY_LIMIT, retryDelay: 2, retryBackoff: true, expireInSeconds: 120, notify: true },
  concurrency: 8,
  async run(deps, payload, job) {
    try {
      const event = await applyProviderEvent(deps.db, payload.eventId, new Date(), deps.logger);
      return { status: event?.status ?? 'missing' };
    } catch (error) {
      if (job.retryCount < RETRY_LIMIT) throw error;
      const event = await giveUpProviderEvent(deps.db, payload.eventId, error instanceof Error ? error.message : String(error));
      deps.logger.error({ err: error, providerEvent: payload.eventId }, 'provider event failed after its last retry');
      return { status: event?.status ?? 'missing' };
    }
  },
});
