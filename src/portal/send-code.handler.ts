import { defineJobHandler } from '../queue/job.ts';
import { sendPortalCode } from './sign-in.ts';
import { sendPortalCodeJob } from './send-code.job.ts';

export const sendPortalCodeHandler = defineJobHandler(sendPortalCodeJob, {
  async run(deps, payload) {
    return { sent: await sendPortalCode(deps.db, payload.email) };
  },
});
