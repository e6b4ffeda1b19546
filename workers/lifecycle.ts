// Procfile `lifecycle`: runs the jobs of the lifecycle worker group.
import { runWorkerProcess } from '../src/process/worker-process.ts';

await runWorkerProcess('lifecycle');
