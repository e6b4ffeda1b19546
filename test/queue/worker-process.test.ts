import { spawn } from 'node:child_process';
import test from 'ava';
import { purgeExpiredJob } from '../../src/housekeeping/purge-expired.job.ts';
import { enqueue } from '../../src/queue/enqueue.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

let app: TestApp;
test.before(async () => {
  app = await startTestApp();
});
test.after.always(async () => app?.close());

test('the lifecycle worker process runs queued jobs and exits cleanly on SIGTERM', async (t) => {
  const id = await app.db.transaction((trx) => enqueue(trx, purgeExpiredJob, {}));
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/lifecycle.ts'], {
    env: { ...process.env, DATABASE_URL: app.database.url, LOG_LEVEL: 'info', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const state = await waitFor(
      async () => (await app.db.raw('select state from pgboss.job where id = ?', [id])).rows[0]?.state as string,
      (s) => s === 'completed',
      30_000,
    );
    t.is(state, 'completed', output);
    child.kill('SIGTERM');
    t.is(await exited, 0, output);
    t.regex(output, /shutting down/);
  } finally {
    child.kill('SIGKILL');
  }
});
