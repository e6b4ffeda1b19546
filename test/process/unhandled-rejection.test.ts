/**
 * Issue 33 item 3: a rejection nobody handles stops a process of the service deliberately: logged, what it opened
 * closed, a non-zero exit code; never a silent crash mid-write, never a process serving on in an unknown state.
 * Every entry point (src/main.ts, src/server.ts, src/release.ts, workers/*) runs through runProcess.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';

test('a lost rejection is logged, what was opened is closed, and the process exits with code 1', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/process/lost-promise.ts'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  t.is(code, 1, output);
  t.regex(output, /lost-promise: unhandled rejection: Error: a flush nobody waited for failed/);
  t.regex(output, /closed what it opened/);
});

test('every entry point runs through runProcess (and so stops so on a lost rejection)', (t) => {
  const entryPoints = [
    'src/main.ts',
    'src/server.ts',
    'src/release.ts',
    ...readdirSync('workers').map((f) => `workers/${f}`),
  ];
  for (const file of entryPoints)
    t.regex(readFileSync(file, 'utf8'), /\brun(Worker)?Process\(/, `${file} does not call runProcess`);
  t.regex(readFileSync('src/process/worker-process.ts', 'utf8'), /\brunProcess\(/);
});
