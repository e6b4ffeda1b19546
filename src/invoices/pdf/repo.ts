/**
 * SQL for invoice PDFs: the rows a render reads, and the stored PDFs (invoice_pdfs, keyed by content version, D-53).
 */
import type { CustomerRow } from '../../customers/repo.ts';
import type { Db } from '../../db/knex.ts';
import type { InvoiceRow, LineItemRow } from '../repo.ts';

export type PdfCustomer = Pick<CustomerRow, 'name' | 'email' | 'company' | 'billing_address' | 'tax_id'>;

export interface InvoiceForPdf {
  invoice: InvoiceRow;
  lines: LineItemRow[];
  customer: PdfCustomer;
  /** Whether a PDF of the invoice's current content version is stored already. */
  currentPdfStored: boolean;
}

/**
 * The invoice with its lines, its customer's printed fields and whether its current version is rendered,
 * in one statement: the render job runs this once per PDF, and on a small machine every query there is
 * CPU taken from Chromium. Amounts inside the JSON lines are text, as NUMERIC is everywhere else.
 */
export async function findInvoiceForPdf(db: Db, invoiceId: string): Promise<InvoiceForPdf | undefined> {
  const { rows } = await db.raw(
    `select i.*,
       c.name as customer_name, c.email as customer_email, c.company as customer_company,
       c.billing_address as customer_billing_address, c.tax_id as customer_tax_id,
       exists (select 1 from invoice_pdfs p where p.invoice_id = i.id and p.content_version = i.content_version)
         as current_pdf_stored,
       coalesce((select json_agg(json_build_object(
           'id', l.id, 'invoice_id', l.invoice_id, 'position', l.position, 'description', l.description,
           'quantity', l.quantity, 'unit_price', l.unit_price::text, 'amount', l.amount::text,
           'tax_rate_ids', l.tax_rate_ids, 'usage', l.usage) order by l.position)
         from invoice_line_items l where l.invoice_id = i.id), '[]'::json) as line_items
     from invoices i join customers c on c.id = i.customer_id
     where i.id = ?`,
    [invoiceId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const {
    customer_name,
    customer_email,
    customer_company,
    customer_billing_address,
    customer_tax_id,
    current_pdf_stored,
    line_items,
    ...invoice
  } = row;
  return {
    invoice: invoice as InvoiceRow,
    lines: line_items as LineItemRow[],
    customer: {
      name: customer_name,
      email: customer_email,
      company: customer_company,
      billing_address: customer_billing_address,
      tax_id: customer_tax_id,
    },
    currentPdfStored: current_pdf_stored === true,
  };
}

export async function findStoredPdf(db: Db, invoiceId: string, contentVersion: number): Promise<Buffer | undefined> {
  const row: { pdf: Buffer } | undefined = await db('invoice_pdfs')
    .where({ invoice_id: invoiceId, content_version: contentVersion })
    .first('pdf');
  return row?.pdf;
}

/** Stores a rendered PDF; a second render of the same version (a retried or duplicated job) changes nothing. */
export async function insertStoredPdf(
  db: Db,
  pdf: { invoiceId: string; contentVersion: number; pdf: Buffer },
): Promise<boolean> {
  const inserted = await db('invoice_pdfs')
    .insert({ invoice_id: pdf.invoiceId, content_version: pdf.contentVersion, pdf: pdf.pdf })
    .onConflict(['invoice_id', 'content_version'])
    .ignore()
    .returning('invoice_id');
  return inserted.length > 0;
}
