/** `npm run bench`: every benchmark script in turn, each in its own process; stops at the first that fails. */
import { spawnSync } from 'node:child_process';

const SCRIPTS = [
  'run',
  'pdf-render',
  'webhook-delivery',
  'lifecycle-sweep',
  'console',
  'usage',
  'emails',
  'portal',
  'test-clocks',
];

for (const script of SCRIPTS) {
  const { status } = spawnSync(process.execPath, ['--import', 'tsx', `bench/${script}.ts`], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
