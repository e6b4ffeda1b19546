import { z } from 'zod';
import { defineJob } from '../queue/job.ts';
import { applyProviderEvent } from './service.ts';

/** Applies one stored provider event (D-62); retried with backoff while the database or a lock says no. */
export const applyProviderEventJob = defineJob({
  name: 'provider-events.apply',
  group: 'provider_events',
  payload: z.object({ eventId: z.uuid() }),
  queue: { retryLimit: 10, retryDelay: 2, retryBackoff: true, expireInSeconds: 120, notify: true },
  concurrency: 8,
  async run(deps, payload) {
    const event = await applyProviderEvent(deps.db, payload.eventId);
    return { status: event?.status ?? 'missing' };
  },
});
