// Procfile `emails`: runs the jobs of the emails worker group (the outbox's dispatcher, M-2).
import { runWorkerProcess } from '../src/process/worker-process.ts';

await runWorkerProcess('emails');
