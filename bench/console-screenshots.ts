/**
 * `npm run console:screenshots`: the console as a newcomer first sees it. Starts the service on a throw-away
 * PostgreSQL (as `npm run bench` does), fills it with `npm run demo`, signs in with Chromium and saves each
 * console page at 1280 px and at 360 px to docs/screenshots/<page>.png and <page>-360.png. Pages that answer
 * 404 (not built yet) are skipped and listed. SCREENSHOT_PAGES=invoices,payments shoots only the shots named.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer';
import { roleArgs } from '../test/faults/processes.ts';
import { launchChromium, newPage, signIn } from '../test/helpers/browser.ts';
import { cleanUp, onCleanup, startBenchDatabase, startChildServer } from './harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'docs', 'screenshots');
const say = (message: string) => console.error(`[screenshots] ${message}`);
const ADMIN = { email: 'admin@demo.example', password: 'screenshots-demo-password' };
const WIDTHS = [1280, 360] as const;
/** A long list is cut here: the first screens say what the page is; a 7000 px strip says nothing more. */
const MAX_HEIGHT = 2400;
const ONLY = process.env.SCREENSHOT_PAGES?.split(',').map((name) => name.trim());

/** A page to shoot: a fixed path, or one found by following the first matching link of another page. */
interface Shot {
  name: string;
  path: string;
  /** Follow the first link of `path` whose href matches, to shoot an object's page. */
  follow?: RegExp;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SHOTS: Shot[] = [
  { name: 'overview', path: '/admin' },
  { name: 'customers', path: '/admin/customers' },
  // The demo's oldest enterprise customer: subscriptions, invoices, payments, credits and a license.
  { name: 'customer', path: '/admin/customers?q=Whitfield', follow: new RegExp(`^/admin/customers/${UUID}$`) },
  { name: 'invoices', path: '/admin/invoices' },
  { name: 'invoice', path: '/admin/invoices?status=overdue', follow: new RegExp(`^/admin/invoices/${UUID}$`) },
  { name: 'payments', path: '/admin/payments' },
  { name: 'subscriptions', path: '/admin/subscriptions' },
  { name: 'subscription', path: '/admin/subscriptions', follow: new RegExp(`^/admin/subscriptions/${UUID}$`) },
  { name: 'products', path: '/admin/products' },
  { name: 'product', path: '/admin/products', follow: new RegExp(`^/admin/products/${UUID}$`) },
  { name: 'coupons', path: '/admin/coupons' },
  { name: 'licenses', path: '/admin/licenses' },
  { name: 'license', path: '/admin/licenses', follow: /^\/admin\/licenses\/[^/?]+$/ },
  { name: 'webhooks', path: '/admin/webhooks' },
  { name: 'webhook', path: '/admin/webhooks', follow: new RegExp(`^/admin/webhooks/${UUID}$`) },
  { name: 'provider-events', path: '/admin/provider-events' },
  { name: 'lifecycle', path: '/admin/lifecycle' },
  { name: 'settings', path: '/admin/settings' },
  { name: 'audit-log', path: '/admin/audit-log' },
  // Issue 34: the reports, the search and a name picked as the customer filter.
  { name: 'reports-aging', path: '/admin/reports/aging' },
  { name: 'reports-revenue', path: '/admin/reports/revenue' },
  { name: 'search', path: '/admin/search?q=whitfield' },
  { name: 'invoices-by-customer-name', path: '/admin/invoices?customer=whitfield' },
  // C-15's sorted lists: by a column, either way.
  { name: 'invoices-sorted', path: '/admin/invoices?sort=-total' },
  // The totals of a filtered list (C-15): the unfiltered ones say how to get them.
  { name: 'invoices-filtered-totals', path: '/admin/invoices?status=overdue' },
  { name: 'payments-sorted', path: '/admin/payments?sort=-amount' },
  { name: 'customers-sorted', path: '/admin/customers?sort=name' },
  { name: 'subscriptions-sorted', path: '/admin/subscriptions?sort=currentPeriodEnd' },
];

function runDemo(databaseUrl: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/demo/cli.ts'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'development',
        // The demo runs the lifecycle sweep week by week through the past year (issue 33: off by default).
        LIFECYCLE_ALLOW_AS_OF: 'true',
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run demo exited with ${code}`))));
  });
}

/** Opens `shot` on `page`; answers the path shot, or null when the page (or the link to follow) does not exist. */
async function open(page: Page, baseUrl: string, shot: Shot): Promise<string | null> {
  let response = await page.goto(baseUrl + shot.path, { waitUntil: 'load' });
  if (!response || response.status() === 404) return null;
  if (!response.ok()) throw new Error(`${shot.path} answered ${response.status()}`);
  if (!shot.follow) return shot.path;
  const hrefs = await page.$$eval('main a[href], table a[href]', (links) =>
    links.map((a) => a.getAttribute('href') ?? ''),
  );
  const target = hrefs.find((href) => shot.follow!.test(href));
  if (!target) return null;
  response = await page.goto(baseUrl + target, { waitUntil: 'load' });
  if (!response || response.status() === 404) return null;
  if (!response.ok()) throw new Error(`${target} answered ${response.status()}`);
  return target;
}

async function main(): Promise<void> {
  say('starting PostgreSQL and migrating a throw-away database');
  const databaseUrl = await startBenchDatabase();
  say('npm run demo');
  await runDemo(databaseUrl);
  say('starting the service (package.json script web)');
  const service = await startChildServer(
    'service',
    roleArgs('web'),
    { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'development' },
    '/readyz',
  );

  const browser = await launchChromium();
  onCleanup(() => browser.close());
  mkdirSync(outDir, { recursive: true });
  const skipped = new Set<string>();
  for (const width of WIDTHS) {
    const { page, close } = await newPage(browser, width);
    await signIn(page, service.baseUrl, ADMIN.email, ADMIN.password);
    for (const shot of SHOTS.filter((s) => !ONLY || ONLY.includes(s.name))) {
      const shown = await open(page, service.baseUrl, shot);
      if (!shown) {
        skipped.add(shot.name);
        continue;
      }
      const file = path.join(outDir, `${shot.name}${width === 1280 ? '' : `-${width}`}.png`);
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      await page.screenshot({
        path: file as `${string}.png`,
        clip: { x: 0, y: 0, width, height: Math.min(height, MAX_HEIGHT) },
        captureBeyondViewport: true,
      });
      say(`${shown} at ${width} px -> ${path.relative(root, file)}`);
    }
    await close();
  }
  if (skipped.size > 0) say(`not built yet (404): ${[...skipped].join(', ')}`);
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error('\nSCREENSHOTS FAILED:', error instanceof Error ? error.message : error);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
