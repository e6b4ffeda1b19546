/**
 * The customer portal benchmark (issue 37): the Overview and Invoices pages of a customer with 500 invoices, signed in
 * with a portal session, under 32 connections (a public site, unlike the console's 8), beside the raw select ceiling
 * measured in the same run at the same concurrency: the ratio and p99. Aims (informative): 0.2 of the ceiling and p99
 * under 300 ms. Then the sign-in form's answer for a known and an unknown email, one request at a time, each from its
 * own client IP (X-Forwarded-For with TRUST_PROXY, so the per-IP limit does not refuse the run) and for its own
 * address: both medians are printed (P-2: the answer must not tell them apart), not asserted.
 *
 *   BENCH_SECONDS, BENCH_WARMUP_SECONDS   as npm run bench (10, 2)
 *   PORTAL_LOGIN_SAMPLES                  sign-in answers timed per kind (default 200)
 */
import os from 'node:os';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex.ts';
import { roleArgs } from '../test/faults/processes.ts';
import { loginAsAdmin } from '../test/helpers/auth.ts';
import { ceilings, measureSelectCeiling } from './ceilings.ts';
import { seedRows } from './fixtures.ts';
import {
  formatTable,
  measure,
  onCleanup,
  problemOf,
  runBenchScript,
  startBenchDatabase,
  startChildServer,
  type LoadOptions,
  type LoadSpec,
  type Row,
} from './harness.ts';

const say = (message: string) => console.error(`[bench portal] ${message}`);
const POOL_MAX = '10';
const INVOICES = 500;
const options: LoadOptions = {
  seconds: Number(process.env.BENCH_SECONDS || 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS || 2),
  connections: 32,
};
const SAMPLES = Number(process.env.PORTAL_LOGIN_SAMPLES || 200);
const AIM = 0.2;
const AIM_P99_MS = 300;

/** The customer whose portal is measured: 500 invoices over two years, the newest still open, and a subscription. */
async function seedPortalCustomer(knex: Knex, planId: string): Promise<string> {
  const [customer] = await knex('customers')
    .insert({ name: 'Portal Bench Customer', email: 'portal-bench@bench.test', company: 'Bench Ltd' })
    .returning('id');
  await knex.raw(
    `insert into subscriptions (customer_id, plan_id, status, billing_cycle, billing_anchor, period_number,
       current_period_start, current_period_end)
     values (?, ?, 'active', 'monthly', now(), 0, now(), now() + interval '1 month')`,
    [customer.id, planId],
  );
  await knex.raw(
    `insert into invoices (customer_id, invoice_number, status, currency, subtotal, tax_amount, total, amount_paid,
                           due_date, issued_at, paid_at, created_at, updated_at)
     select ?, 'PB-' || lpad(g::text, 6, '0'), case when g > ? - 5 then 'issued' else 'paid' end, 'USD', 29, 0, 29,
            case when g > ? - 5 then 0 else 29 end, at + interval '14 days', at,
            case when g > ? - 5 then null else at + interval '3 days' end, at, at
       from generate_series(1, ?) as g, lateral (select now() - (? - g) * interval '1 day' as at) as d`,
    [customer.id, INVOICES, INVOICES, INVOICES, INVOICES, INVOICES],
  );
  await knex.raw(
    `insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount)
     select id, 1, 'Bench subscription', 1, total, total from invoices where customer_id = ?`,
    [customer.id],
  );
  await knex.raw('analyze customers, subscriptions, invoices, invoice_line_items');
  return customer.id;
}

function pageLoad(pagePath: string, cookie: string): LoadSpec {
  return { method: 'GET', headers: { cookie }, next: () => ({ path: pagePath }), accept: (b) => b.includes('<h1') };
}

async function portalCookie(baseUrl: string, adminCookie: string, customerId: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/billing/portal-sessions`, {
    method: 'POST',
    headers: { cookie: adminCookie, 'content-type': 'application/json' },
    body: JSON.stringify({ customerId }),
  });
  const { url } = (await res.json()) as { url: string };
  const opened = await fetch(`${baseUrl}${new URL(url).pathname}`, { redirect: 'manual' });
  const cookie = /portal_session=[^;]+/.exec(opened.headers.get('set-cookie') ?? '')?.[0];
  if (!cookie) throw new Error(`no portal session: ${opened.status}`);
  return cookie;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** Times POST /portal/login for known and unknown addresses, interleaved, each from its own IP. */
async function timeSignIn(baseUrl: string, knex: Knex) {
  const known = await knex('customers')
    .insert(Array.from({ length: SAMPLES }, (_, i) => ({ name: `Known ${i}`, email: `known-${i}@bench.test` })))
    .returning('email');
  const page = await fetch(`${baseUrl}/portal/login`, { headers: { 'x-forwarded-for': '10.9.0.1' } });
  const cookie = /console_csrf=[^;]+/.exec(page.headers.get('set-cookie') ?? '')![0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const times = { known: [] as number[], unknown: [] as number[] };
  for (let i = 0; i < SAMPLES * 2; i += 1) {
    const kind = i % 2 === 0 ? 'known' : 'unknown';
    const n = Math.floor(i / 2);
    const email = kind === 'known' ? known[n].email : `unknown-${n}@bench.test`;
    const started = performance.now();
    const res = await fetch(`${baseUrl}/portal/login`, {
      method: 'POST',
      headers: {
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': `10.${8 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
      },
      body: new URLSearchParams({ _csrf: csrf, email }).toString(),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
    times[kind].push(performance.now() - started);
  }
  return { known: median(times.known), unknown: median(times.unknown) };
}

async function main(): Promise<number> {
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const knex = createKnex(databaseUrl, 2);
  onCleanup(() => knex.destroy());
  const rows = await seedRows(knex, { history: false });
  const customerId = await seedPortalCustomer(knex, rows.planIds[0]!);

  say(`ceiling ${ceilings.select.title} at ${options.connections} connections`);
  const { row: ceilingRow, ceiling } = await measureSelectCeiling(databaseUrl, rows, options, POOL_MAX);
  const results: Row[] = [ceilingRow];

  say('starting the service (package.json script web)');
  const service = await startChildServer(
    'service',
    roleArgs('web'),
    {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
      DB_POOL_MAX: POOL_MAX,
      TRUST_PROXY: 'true',
    },
    '/readyz',
  );
  const { cookie: adminCookie } = await loginAsAdmin(service.baseUrl, knex);
  const cookie = await portalCookie(service.baseUrl, adminCookie, customerId);
  for (const pagePath of ['/portal', '/portal/invoices']) {
    say(`GET ${pagePath}: ${options.warmupSeconds} s warm-up, ${options.seconds} s measured`);
    const measurement = await measure(service.baseUrl, pageLoad(pagePath, cookie), options);
    results.push({
      name: `GET ${pagePath} (portal, ${INVOICES} invoices)`,
      measurement,
      ceilingName: ceilings.select.title,
      ceilingRequestsPerSecond: ceiling.requestsPerSecond,
      aim: AIM,
      aimP99Ms: AIM_P99_MS,
    });
  }
  say(`POST /portal/login: ${SAMPLES} known and ${SAMPLES} unknown addresses, one at a time`);
  const signIn = await timeSignIn(service.baseUrl, knex);

  console.log('');
  console.log(
    `customer portal, one customer with ${INVOICES} invoices; ${options.connections} connections, ` +
      `${options.seconds} s each after ${options.warmupSeconds} s warm-up; ${os.cpus().length} CPUs, load ` +
      `${os.loadavg()[0]!.toFixed(2)}; Node ${process.version}`,
  );
  console.log(formatTable(results));
  console.log(
    `POST /portal/login median answer (P-2, not asserted): known email ${signIn.known.toFixed(2)} ms, ` +
      `unknown email ${signIn.unknown.toFixed(2)} ms (${SAMPLES} each, interleaved)`,
  );
  const failures = results.flatMap((row) => {
    const problem = problemOf(row.measurement);
    return problem ? [`${row.name}: ${problem}`] : [];
  });
  const died = service.exitedEarly();
  if (died) failures.push(died);
  if (failures.length > 0) {
    console.error(`\nPORTAL BENCH FAILED\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    return 1;
  }
  return 0;
}

await runBenchScript(import.meta.url, 'PORTAL', main);
