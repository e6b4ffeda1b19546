import { fromKnex } from 'pg-boss';
import type { Db } from '../../db/knex.ts';
import { inTransaction } from '../../db/knex.ts';
import { notFound } from '../../errors.ts';
import { getBoss } from '../../queue/boss.ts';
import { enqueue } from '../../queue/enqueue.ts';
import { visibleToCustomer } from '../customer-view.ts';
import { findInvoiceRow } from '../repo.ts';
import { renderInvoicePdfJob } from './render-pdf.job.ts';
import { findStoredPdf } from './repo.ts';

export type InvoicePdf =
  | { kind: 'ready'; pdf: Buffer; filename: string; contentVersion: number }
  | { kind: 'rendering'; retryAfterSeconds: number };

export interface InvoicePdfOptions {
  /** v1: only an invoice this customer was sent; another customer's, or a draft, is not found. */
  customerId?: string;
  /** How long to wait for a render before answering "rendering" (D-53: 10 s). */
  waitMs?: number;
}

const WAIT_MS = 10_000;
const RETRY_AFTER_SECONDS = 5;
/** The wait polls quickly at first (a warm worker needs ~100-300 ms), then settles at 200 ms. */
const POLL_MS = [50, 100, 100, 150];
const POLL_MS_LATER = 200;

const ACTIVE_STATES = new Set(['created', 'retry', 'active']);

/** A file name safe inside a quoted Content-Disposition parameter. */
function pdfFilename(invoiceNumber: string): string {
  return `${invoiceNumber.replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`;
}

/**
 * Enqueues the render of one invoice version unless one is queued, waiting to retry or running: every
 * waiting request joins that one. The transaction-level advisory lock makes check-then-send atomic
 * between concurrent requests for the same version.
 */
export async function requestInvoicePdfRender(db: Db, invoiceId: string, contentVersion: number): Promise<void> {
  const key = `${invoiceId}:${contentVersion}`;
  await inTransaction(db, async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`invoices.render-pdf:${key}`]);
    const jobs = await getBoss().findJobs(renderInvoicePdfJob.name, { key, db: fromKnex(trx) });
    if (jobs.some((job) => ACTIVE_STATES.has(job.state))) return;
    await enqueue(trx, renderInvoicePdfJob, { invoiceId, contentVersion }, { singletonKey: key });
  });
}

/**
 * D-53: the stored PDF of the invoice's current content version; when there is none, the render is asked
 * for (or joined) and awaited up to `waitMs`, after which the caller answers 202 with Retry-After.
 */
export async function getInvoicePdf(db: Db, invoiceId: string, options: InvoicePdfOptions = {}): Promise<InvoicePdf> {
  const invoice = await findInvoiceRow(db, invoiceId);
  if (!invoice || (options.customerId !== undefined && !visibleToCustomer(invoice, options.customerId)))
    throw notFound('Invoice');
  const version = invoice.content_version;
  const ready = (pdf: Buffer): InvoicePdf => ({
    kind: 'ready',
    pdf,
    filename: pdfFilename(invoice.invoice_number),
    contentVersion: version,
  });

  const stored = await findStoredPdf(db, invoiceId, version);
  if (stored) return ready(stored);

  await requestInvoicePdfRender(db, invoiceId, version);
  const deadline = Date.now() + (options.waitMs ?? WAIT_MS);
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const pause = Math.min(POLL_MS[attempt] ?? POLL_MS_LATER, Math.max(0, deadline - Date.now()));
    await new Promise((resolve) => setTimeout(resolve, pause));
    const pdf = await findStoredPdf(db, invoiceId, version);
    if (pdf) return ready(pdf);
  }
  return { kind: 'rendering', retryAfterSeconds: RETRY_AFTER_SECONDS };
}
