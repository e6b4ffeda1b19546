/**
 * A process run as every entry point runs (src/process/run.ts runProcess) that loses a promise once started: a
 * rejection nobody handles. The test beside it expects a logged, deliberate shutdown with a non-zero code.
 */
import { runProcess } from '../../src/process/run.ts';

await runProcess('lost-promise', async (opened) => {
  opened.add(async () => {
    process.stdout.write('closed what it opened\n');
  });
  // Kept alive like a server, until the process decides to stop.
  setInterval(() => {}, 1000);
  setTimeout(() => void Promise.reject(new Error('a flush nobody waited for failed')), 50);
});
