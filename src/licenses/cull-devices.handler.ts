import { defineJobHandler } from '../queue/job.ts';
import { cullDeadDevicesJob } from './cull-devices.job.ts';
import { cullDeadDevices } from './seats.ts';

export const cullDeadDevicesHandler = defineJobHandler(cullDeadDevicesJob, {
  async run(deps) {
    const culled = await cullDeadDevices(deps.db);
    if (culled > 0) deps.logger.info({ culled }, 'culled dead license devices');
    return { culled };
  },
});
