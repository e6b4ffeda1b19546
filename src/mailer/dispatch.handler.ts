import { defineJobHandler } from '../queue/job.ts';
import { dispatchEmailsJob } from './dispatch.job.ts';
import { startEmailDispatcher, wakeEmailDispatcher } from './dispatcher.ts';

export const dispatchEmailsHandler = defineJobHandler(dispatchEmailsJob, {
  background: (deps) => startEmailDispatcher(deps),
  run: async () => {
    wakeEmailDispatcher();
    return { outcome: 'woken' };
  },
});
