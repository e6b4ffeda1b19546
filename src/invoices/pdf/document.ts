/** Everything printed on an invoice, read together: the invoice, its lines, its customer and the seller. */
import type { Db } from '../../db/knex.ts';
import { getSettingCached } from '../../settings/cache.ts';
import type { SettingOverrides } from '../../settings/service.ts';
import { findInvoiceForPdf } from './repo.ts';
import type { InvoiceDocument, Seller } from './template.ts';

/** The seller block from the `company.*` settings (cached for 5 s per process, as every hot-path setting). */
export async function loadSeller(db: Db, overrides: SettingOverrides): Promise<Seller> {
  const [name, address, email, taxId] = await Promise.all([
    getSettingCached(db, 'company.name', overrides),
    getSettingCached(db, 'company.address', overrides),
    getSettingCached(db, 'company.email', overrides),
    getSettingCached(db, 'company.tax_id', overrides),
  ]);
  return { name, address, email, taxId };
}

export interface LoadedInvoiceDocument {
  document: InvoiceDocument;
  /** A PDF of the invoice's current content version is stored already. */
  currentPdfStored: boolean;
}

/** The invoice's document, or undefined when there is no such invoice: one query (the seller is cached). */
export async function loadInvoiceDocument(
  db: Db,
  invoiceId: string,
  overrides: SettingOverrides,
): Promise<LoadedInvoiceDocument | undefined> {
  const [found, seller] = await Promise.all([findInvoiceForPdf(db, invoiceId), loadSeller(db, overrides)]);
  if (!found) return undefined;
  return {
    document: { invoice: found.invoice, lines: found.lines, customer: found.customer, seller },
    currentPdfStored: found.currentPdfStored,
  };
}
