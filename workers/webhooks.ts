// Procfile `webhooks`: runs the jobs of the webhooks worker group.
import { runWorkerProcess } from '../src/process/worker-process.ts';

await runWorkerProcess('webhooks');
