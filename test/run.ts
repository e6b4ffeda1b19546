/**
 * `npm test`: one PostgreSQL server for the whole run (embedded in a temporary folder, or DATABASE_URL),
 * a template database migrated once, then ava; each test file clones the template into its own database.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { prepareTemplate } from './helpers/template.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

let adminUrl = process.env.DATABASE_URL;
let stopServer = async () => {};
let tempDir: string | undefined;
if (!adminUrl) {
  tempDir = mkdtempSync(path.join(os.tmpdir(), 'billing-test-pg-'));
  // The server runs as the unprivileged postgres user when we are root: it must reach the folder.
  chmodSync(tempDir, 0o755);
  const server = await startEmbeddedPostgres({ dataDir: path.join(tempDir, 'data'), port: await freePort(), ephemeral: true });
  adminUrl = server.adminUrl;
  stopServer = server.stop;
}

const templateName = `billing_template_${process.pid}`;
await prepareTemplate(adminUrl, templateName);

const args = process.argv.slice(2);
const ava = spawn(process.execPath, [path.resolve('node_modules/ava/entrypoints/cli.mjs'), ...args], {
  env: { ...process.env, TEST_ADMIN_URL: adminUrl, TEST_TEMPLATE_DB: templateName, NODE_ENV: 'test', DATABASE_URL: '' },
  stdio: ['inherit', 'pipe', 'inherit'],
});
let output = '';
ava.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  output += chunk.toString();
});
const code: number = await new Promise((resolve) => ava.on('close', (c) => resolve(c ?? 1)));

const count = (re: RegExp) => Number(re.exec(output)?.[1] ?? 0);
// ava's own summary is not among the lines CI reads, so say it plainly too.
// ava prints "N tests passed" only when nothing failed; otherwise count its per-test marks.
const marks = (mark: string) => output.split('\n').filter((l) => l.trimStart().startsWith(mark)).length;
const passed = count(/(\d+) tests? passed/) || marks('✔');
const failed = count(/(\d+) tests? failed/) + count(/(\d+) uncaught exceptions?/) + count(/(\d+) unhandled rejections?/);
const skipped = count(/(\d+) tests? skipped/);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`drop database if exists ${pg.escapeIdentifier(templateName)} with (force)`).catch(() => {});
await admin.end();
await stopServer();
if (tempDir) rmSync(tempDir, { recursive: true, force: true });
process.exit(code !== 0 ? code : failed > 0 || passed === 0 ? 1 : 0);
