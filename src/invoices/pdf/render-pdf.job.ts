import type { Queue } from 'pg-boss';
import { z } from 'zod';
import { defineJob } from '../../queue/job.ts';

/**
 * Tabs in the worker's one browser: 2, one per core of the machines this runs on. A render is CPU work
 * (layout, then printing) in Chromium's renderer and browser processes; more tabs than cores only queue
 * on the same cores and cost memory (4 tabs measured no faster than 2).
 */
export const PDF_TABS = 2;

/**
 * Jobs run at once in one worker process: twice the tabs. Each job also reads its invoice, stores the
 * PDF and goes through pg-boss's fetch and complete; with two more jobs than tabs that I/O overlaps the
 * renders of the others, so the tabs do not sit idle between jobs (bench/pdf-render.ts: 4 jobs on 2 tabs
 * kept a few points more of bare puppeteer's throughput than 2 on 2). Jobs beyond the tabs wait for one.
 */
export const PDF_CONCURRENCY = 2 * PDF_TABS;

const queue: Omit<Queue, 'name'> = {
  retryLimit: 3,
  retryDelay: 5,
  retryBackoff: true,
  // A render takes well under a second on a warm browser: one still active after a minute is stuck.
  expireInSeconds: 60,
  notify: true,
};

/** D-53: renders one version of an invoice into invoice_pdfs; GET .../pdf enqueues it (and waits for it). */
export const renderInvoicePdfJob = defineJob({
  name: 'invoices.render-pdf',
  group: 'pdf',
  payload: z.object({ invoiceId: z.uuid(), contentVersion: z.number().int().min(1) }),
  queue,
  concurrency: PDF_CONCURRENCY,
});
