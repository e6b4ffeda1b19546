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
    // No NOTIFY: a notifying transaction holds PostgreSQL's one notify lock through its commit, so the webhook
    // acknowledgements (the volume path) each waited for a WAL flush of their own (1.06 flushes per request against
    // 0.70 without, bench/cpu-per-request.ts). The workers' half-second poll finds the job instead.
    notify: false,
  },
  concurrency: 8,
});
