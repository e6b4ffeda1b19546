import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/** Attempts after the first; the handler keeps the event as `failed` when the last one fails. */
export const APPLY_PROVIDER_EVENT_RETRY_LIMIT = 10;

/**
 * Applies one stored provider event (D-62); retried with backoff while the database or a lock says no.
 * When the last retry fails too, the event is kept as `failed` with the error, listed and replayable.
 */
export const applyProviderEventJob = defineJob({
  name: 'provider-events.apply',
  group: 'provider_events',
  payload: z.object({ eventId: z.uuid() }),
  queue: {
    retryLimit: APPLY_PROVIDER_EVENT_RETRY_LIMIT,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 120,
    notify: true,
  },
  concurrency: 8,
});
