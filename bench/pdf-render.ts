/**
 * Invoice PDF throughput (issue 4): PDFs/s through the queue and the real pdf worker process, beside bare
 * puppeteer rendering the same HTML in the same run, as a ratio (aim >= 0.7).
 *
 *   npx tsx bench/pdf-render.ts
 *
 *   PDF_BENCH_COUNT   PDFs measured per run (300)
 *   PDF_BENCH_WARMUP  unmeasured renders before each run (20)
 *   PDF_BENCH_WORKER_LOG  a file to write the worker's log to (per-job `ms` and `renderMs`)
 *
 * The ceiling: one warm browser, PDF_TABS reused tabs (as the worker has), page.setContent +
 * page.pdf over the pre-built HTML of the measured invoices, nothing else. It runs before and after the
 * worker run, and the ratio divides by the mean of the two, so a drift in the machine's load during the
 * run (neighbours, CPU boost) weighs on both sides alike.
 * The service path: one statement enqueues a render job per invoice (as a batch of issued invoices
 * would), and the clock stops when the worker has stored the last PDF in invoice_pdfs: each job is
 * fetched, re-reads its invoice, lines, customer and settings, renders, stores the bytes and completes.
 * Not the ratio's business: the 10 s wait of GET .../pdf, which only polls for what this measures.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import puppeteer, { type Browser } from 'puppeteer';
import { childProcessEnvironment } from '../src/config.ts';
import { chromiumArgs, resolveChromium } from '../src/invoices/pdf/chromium.ts';
import { loadInvoiceDocument } from '../src/invoices/pdf/document.ts';
import { PDF_CONCURRENCY, PDF_TABS, renderInvoicePdfJob } from '../src/invoices/pdf/render-pdf.job.ts';
import { renderInvoiceHtml } from '../src/invoices/pdf/template.ts';
import { createInvoice } from '../src/invoices/service.ts';
import { getBoss } from '../src/queue/boss.ts';
import { onCleanup, openBenchDatabase, startBenchDatabase, runBenchScript } from './harness.ts';
import { SYSTEM_ACTOR } from '../src/actor.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (message: string) => console.error(`[bench pdf] ${message}`);
const AIM = 0.7;

function envCount(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export interface PdfRun {
  name: string;
  pdfs: number;
  seconds: number;
  perSecond: number;
}

export interface PdfBenchResult {
  /** Tabs rendering at once, in the worker's browser and in the bare one. */
  concurrency: number;
  /** Jobs the worker runs at once (more than tabs: their I/O overlaps the renders). */
  jobConcurrency: number;
  bare: PdfRun[];
  worker: PdfRun;
  ratio: number;
  aim: number;
}

/** Invoices of a few shapes (1-12 lines, with and without tax), created through the service. */
async function seedInvoices(knex: Knex, count: number): Promise<string[]> {
  const customers: Array<{ id: string }> = await knex('customers')
    .insert(
      Array.from({ length: 20 }, (_, i) => ({
        name: `PDF Bench Customer ${i + 1}`,
        email: `pdf-bench-${i + 1}@bench.test`,
        company: `Bench Company ${i + 1} GmbH`,
        billing_address: `${i + 1} Bench Street\n10115 Berlin\nGermany`,
        tax_id: `DE${100000000 + i}`,
      })),
    )
    .returning('id');
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { invoice } = await createInvoice(
      knex,
      {
        customerId: customers[i % customers.length]!.id,
        currency: 'EUR',
        taxRate: i % 3 === 0 ? '0' : '19',
        status: 'draft',
        lineItems: Array.from({ length: 1 + (i % 12) }, (_, l) => ({
          description: `Service line ${l + 1} of invoice ${i + 1}`,
          quantity: 1 + (l % 4),
          unitPrice: `${(l + 1) * 7}.50`,
        })),
      },
      SYSTEM_ACTOR,
    );
    ids.push(invoice.id);
  }
  return ids;
}

async function time<T>(work: () => Promise<T>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Bare puppeteer: one browser, `concurrency` reused tabs, setContent + pdf over `htmls`. */
async function renderBare(browser: Browser, htmls: string[], concurrency: number): Promise<void> {
  const pages = await Promise.all(Array.from({ length: concurrency }, () => browser.newPage()));
  let next = 0;
  await Promise.all(
    pages.map(async (page) => {
      for (let i = next++; i < htmls.length; i = next++) {
        await page.setContent(htmls[i]!, { waitUntil: 'load' });
        await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
      }
    }),
  );
  await Promise.all(pages.map((p) => p.close()));
}

async function measureBare(name: string, htmls: string[], warmup: string[], concurrency: number): Promise<PdfRun> {
  const { executablePath, env } = await resolveChromium(process.env.PUPPETEER_EXECUTABLE_PATH);
  const browser = await puppeteer.launch({
    executablePath,
    args: chromiumArgs(),
    headless: 'shell',
    env: childProcessEnvironment(env),
  });
  try {
    await renderBare(browser, warmup, concurrency);
    const seconds = await time(() => renderBare(browser, htmls, concurrency));
    return { name, pdfs: htmls.length, seconds, perSecond: htmls.length / seconds };
  } finally {
    await browser.close();
  }
}

async function storedCount(knex: Knex, ids: string[]): Promise<number> {
  const [row] = await knex('invoice_pdfs').whereIn('invoice_id', ids).count({ n: '*' });
  return Number(row!.n);
}

async function waitStored(knex: Knex, ids: string[], timeoutMs: number, workerOutput: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await storedCount(knex, ids)) < ids.length) {
    if (Date.now() > deadline)
      throw new Error(
        `only ${await storedCount(knex, ids)} of ${ids.length} PDFs stored in ${timeoutMs} ms; worker ` +
          `output:\n${workerOutput()}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * One statement enqueues the batch (as a job rendering a month's invoices would), payloads checked as enqueue() does.
 */
async function enqueueRenders(knex: Knex, ids: string[]): Promise<void> {
  const jobs = ids.map((invoiceId) => ({
    data: renderInvoicePdfJob.payload.parse({ invoiceId, contentVersion: 1 }),
    singletonKey: `${invoiceId}:1`,
  }));
  await knex.transaction((trx) => getBoss().insert(renderInvoicePdfJob.name, jobs, { db: fromKnex(trx) }));
}

/** Runs the PDF benchmark against a migrated database with the queues installed (startBenchDatabase()). */
export async function measurePdfRendering(
  databaseUrl: string,
  options: { count: number; warmup: number },
): Promise<PdfBenchResult> {
  const knex = await openBenchDatabase(databaseUrl, 4);

  say(`creating ${options.warmup + options.count} invoices`);
  const ids = await seedInvoices(knex, options.warmup + options.count);
  const warmupIds = ids.slice(0, options.warmup);
  const measuredIds = ids.slice(options.warmup);
  const htmlOf = async (id: string) => renderInvoiceHtml((await loadInvoiceDocument(knex, id, {}))!.document);
  const measuredHtml = await Promise.all(measuredIds.map(htmlOf));
  const warmupHtml = await Promise.all(warmupIds.map(htmlOf));

  const concurrency = PDF_TABS;
  say(`bare puppeteer, ${concurrency} tabs: ${measuredHtml.length} PDFs`);
  const bareBefore = await measureBare('bare puppeteer (before)', measuredHtml, warmupHtml, concurrency);

  say('starting the pdf worker (workers/pdf.ts)');
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/pdf.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      // A production start needs one (issue 33); the bench's database holds no secret it would open.
      ENCRYPTION_KEY: 'pdf-bench-encryption-key-0123456789abcdef',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const logFile = process.env.PDF_BENCH_WORKER_LOG;
  if (logFile) writeFileSync(logFile, '');
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
    if (logFile) appendFileSync(logFile, chunk);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stopWorker = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  };
  onCleanup(stopWorker);

  let worker: PdfRun;
  try {
    // Warm: the worker has started Chromium and opened its tabs before the clock runs.
    await enqueueRenders(knex, warmupIds);
    await waitStored(knex, warmupIds, 120_000, () => tail);
    say(`queue + worker: ${measuredIds.length} PDFs`);
    const seconds = await time(async () => {
      await enqueueRenders(knex, measuredIds);
      await waitStored(knex, measuredIds, 300_000, () => tail);
    });
    worker = { name: 'queue + pdf worker', pdfs: measuredIds.length, seconds, perSecond: measuredIds.length / seconds };
  } finally {
    await stopWorker();
  }

  say(`bare puppeteer again: ${measuredHtml.length} PDFs`);
  const bareAfter = await measureBare('bare puppeteer (after)', measuredHtml, warmupHtml, concurrency);
  // Bare runs bracket the worker run: their mean is the ceiling at the time the worker ran.
  const ceiling = (bareBefore.perSecond + bareAfter.perSecond) / 2;
  return {
    concurrency,
    jobConcurrency: PDF_CONCURRENCY,
    bare: [bareBefore, bareAfter],
    worker,
    ratio: worker.perSecond / ceiling,
    aim: AIM,
  };
}

export function formatPdfTable(result: PdfBenchResult): string {
  const header = ['measurement', 'PDFs', 'seconds', 'PDFs/s', 'ratio', 'aim', 'status'];
  const rows = [
    ...result.bare.map((r) => [
      r.name,
      String(r.pdfs),
      r.seconds.toFixed(2),
      r.perSecond.toFixed(1),
      '-',
      '-',
      'ceiling',
    ]),
    [
      result.worker.name,
      String(result.worker.pdfs),
      result.worker.seconds.toFixed(2),
      result.worker.perSecond.toFixed(1),
      result.ratio.toFixed(2),
      `>=${result.aim}`,
      result.ratio >= result.aim ? 'ok' : 'ok, below aim',
    ],
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const count = envCount('PDF_BENCH_COUNT', 300);
  const warmup = envCount('PDF_BENCH_WARMUP', 20);
  say('starting PostgreSQL and migrating a bench database');
  const databaseUrl = await startBenchDatabase();
  const result = await measurePdfRendering(databaseUrl, { count, warmup });
  console.log('');
  console.log(
    `invoice PDFs: ${result.concurrency} tabs rendering at once (worker: ${result.jobConcurrency} jobs at once); ` +
      `ratio = worker / mean of the bare runs; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; Node ` +
      `${process.version}`,
  );
  console.log(formatPdfTable(result));
  const outDir = path.join(root, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    path.join(outDir, 'pdf-latest.json'),
    `${JSON.stringify(
      { finishedAt: new Date().toISOString(), node: process.version, cpus: os.cpus().length, ...result },
      null,
      2,
    )}\n`,
  );
  console.log('\nwritten to bench/results/pdf-latest.json');
}

await runBenchScript(import.meta.url, 'PDF', main);
