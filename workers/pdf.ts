// Procfile `pdf`: runs the jobs of the pdf worker group.
import { runWorkerProcess } from '../src/process/worker-process.ts';

await runWorkerProcess('pdf');
