import { z } from 'zod';
import { defineJob } from '../queue/job.ts';

/**
 * P-2: emails a sign-in code to the customer with this address, if there is one. The login form's answer only
 * enqueues this job, the same single write for every address, so neither its answer nor its timing tells whether
 * a customer has the address; the lookup happens here, after the answer.
 */
export const sendPortalCodeJob = defineJob({
  name: 'portal.send-code',
  group: 'emails',
  payload: z.object({ email: z.string().max(320) }),
  queue: { retryLimit: 2, retryDelay: 5, expireInSeconds: 60 },
  concurrency: 2,
});
