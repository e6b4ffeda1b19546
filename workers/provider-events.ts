// Procfile `provider_events`: runs the jobs of the provider_events worker group.
import { runWorkerProcess } from '../src/process/worker-process.ts';

await runWorkerProcess('provider_events');
