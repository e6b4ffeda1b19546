import type { AppDeps } from '../../app-deps.ts';
import type { BrowserManager } from './browser.ts';
import { loadInvoiceDocument } from './document.ts';
import { insertStoredPdf } from './repo.ts';
import { renderInvoiceHtml } from './template.ts';

export type RenderOutcome =
  | { outcome: 'stored'; bytes: number; renderMs: number }
  | { outcome: 'skipped'; reason: 'invoice_missing' | 'version_changed' | 'already_stored' };

/**
 * Renders the invoice as it is at `contentVersion` and stores it. Idempotent: a version stored already,
 * or one the invoice has moved past (nobody will ask for it again), is skipped; renders racing on one
 * version store one PDF.
 */
export async function renderInvoicePdf(
  deps: AppDeps,
  browser: BrowserManager,
  target: { invoiceId: string; contentVersion: number },
): Promise<RenderOutcome> {
  const loaded = await loadInvoiceDocument(deps.db, target.invoiceId, deps.config);
  if (!loaded) return { outcome: 'skipped', reason: 'invoice_missing' };
  // The invoice changed since the render was asked for: that version's content is gone, so no PDF of it.
  if (loaded.document.invoice.content_version !== target.contentVersion)
    return { outcome: 'skipped', reason: 'version_changed' };
  if (loaded.currentPdfStored) return { outcome: 'skipped', reason: 'already_stored' };

  const started = performance.now();
  const pdf = await browser.render(renderInvoiceHtml(loaded.document));
  const renderMs = Math.round(performance.now() - started);
  const stored = await insertStoredPdf(deps.db, {
    invoiceId: target.invoiceId,
    contentVersion: target.contentVersion,
    pdf,
  });
  return stored ? { outcome: 'stored', bytes: pdf.length, renderMs } : { outcome: 'skipped', reason: 'already_stored' };
}
