/**
 * `npm test`: one PostgreSQL server for the whole run (embedded in a temporary folder, or DATABASE_URL),
 * a template database migrated once, then ava; each test file clones the template into its own database.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { launchChromium } from './helpers/browser.ts';
import { freePort } from './helpers/net.ts';
import { prepareTemplate } from './helpers/template.ts';

let adminUrl = process.env.DATABASE_URL;
let stopServer = async () => {};
let tempDir: string | undefined;
if (!adminUrl) {
  tempDir = mkdtempSync(path.join(os.tmpdir(), 'billing-test-pg-'));
  // The server runs as the unprivileged postgres user when we are root: it must reach the folder.
  chmodSync(tempDir, 0o755);
  const server = await startEmbeddedPostgres({
    dataDir: path.join(tempDir, 'data'),
    port: await freePort(),
    ephemeral: true,
  });
  adminUrl = server.adminUrl;
  stopServer = server.stop;
}

const templateName = `billing_template_${process.pid}`;
await prepareTemplate(adminUrl, templateName);

/** Runs ava over `args`; answers its exit code and what it printed (also passed through). */
async function runAva(args: string[]): Promise<{ code: number; output: string }> {
  const ava = spawn(process.execPath, [path.resolve('node_modules/ava/entrypoints/cli.mjs'), ...args], {
    env: {
      ...process.env,
      TEST_ADMIN_URL: adminUrl,
      TEST_TEMPLATE_DB: templateName,
      NODE_ENV: 'test',
      // The suite moves the lifecycle sweep through time (cron `asOf`, --as-of, the demo); off by default (issue 33).
      LIFECYCLE_ALLOW_AS_OF: 'true',
      DATABASE_URL: '',
      ...(browser ? { TEST_BROWSER_WS: browser.wsEndpoint() } : {}),
    },
    stdio: ['inherit', 'pipe', 'inherit'],
  });
  let output = '';
  ava.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    output += chunk.toString();
  });
  const code: number = await new Promise((resolve) => ava.on('close', (c) => resolve(c ?? 1)));
  return { code, output };
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

// With no arguments: every test file in parallel, then the fault runs (test/faults: real processes killed,
// PostgreSQL restarted, a load run) one file at a time, so their timing is not disturbed by the rest.
// TEST_SKIP_FAULTS=1 leaves the fault runs out. With arguments: one ava run over them.
const args = process.argv.slice(2);
const passes: string[][] = [];
if (args.length > 0) {
  passes.push(args);
} else {
  const files = testFiles('test').sort();
  const faults = files.filter((f) => f.startsWith(path.join('test', 'faults') + path.sep));
  passes.push(files.filter((f) => !faults.includes(f)));
  if (process.env.TEST_SKIP_FAULTS !== '1' && faults.length > 0) passes.push(['--concurrency=1', ...faults]);
}
// ava's own summary is not among the lines CI reads, so say it plainly too, summed over the passes.
// ava prints "N tests passed" only when nothing failed; otherwise count its per-test marks.
const count = (output: string, re: RegExp) => Number(re.exec(output)?.[1] ?? 0);
const marks = (output: string, mark: string) => output.split('\n').filter((l) => l.trimStart().startsWith(mark)).length;
// Browser tests (test/console) share one Chromium for the run instead of one per file.
const browser = passes.some((pass) => pass.some((arg) => arg.includes('console'))) ? await launchChromium() : undefined;
let code = 0;
let passed = 0;
let failed = 0;
let skipped = 0;
for (const pass of passes) {
  const run = await runAva(pass);
  code ||= run.code;
  passed += count(run.output, /(\d+) tests? passed/) || marks(run.output, '✔');
  failed +=
    count(run.output, /(\d+) tests? failed/) +
    count(run.output, /(\d+) uncaught exceptions?/) +
    count(run.output, /(\d+) unhandled rejections?/);
  skipped += count(run.output, /(\d+) tests? skipped/);
}
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
await browser?.close();

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`drop database if exists ${pg.escapeIdentifier(templateName)} with (force)`).catch(() => {});
await admin.end();
await stopServer();
if (tempDir) rmSync(tempDir, { recursive: true, force: true });
process.exit(code !== 0 ? code : failed > 0 || passed === 0 ? 1 : 0);
