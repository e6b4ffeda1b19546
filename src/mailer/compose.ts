/**
 * Composes an email row into what is sent (M-3): the recipient (the customer's email), subject, HTML and text parts
 * from the type's template, and the invoice PDF for `invoice.issued`. A PDF not rendered yet is asked of the pdf
 * worker, and the email waits for it rather than going without.
 */
import type { AppDeps } from '../app-deps.ts';
import { findCustomer, findCustomersById } from '../customers/service.ts';
import type { CustomerRow } from '../customers/repo.ts';
import { hostedUrlOf } from '../invoices/hosted-links.ts';
import { getInvoicePdf } from '../invoices/pdf/service.ts';
import type { InvoiceRow } from '../invoices/repo.ts';
import { findInvoice } from '../invoices/service.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { getProduct } from '../products/service.ts';
import { type Company, companyDetails } from '../settings/company.ts';
import { messageContent } from './messages.ts';
import type { EmailRow } from '../emails/repo.ts';
import { renderEmailHtml, renderEmailText } from './template.tsx';

export interface ComposedEmail {
  to: string;
  subject: string;
  html: string;
  text: string;
  attachments: { filename: string; content: Buffer; contentType: string }[];
}

export type Composition = { kind: 'ready'; email: ComposedEmail } | { kind: 'waiting'; reason: string };

/**
 * What the emails of one claim share, read once for all of them rather than twice per email: the company's details
 * as the claim found them, and their customers.
 */
export interface ComposeContext {
  company: Company;
  customers: Map<string, CustomerRow>;
}

export async function composeContext(deps: AppDeps, emails: readonly EmailRow[]): Promise<ComposeContext> {
  const [company, customers] = await Promise.all([
    companyDetails(deps.db),
    findCustomersById(
      deps.db,
      emails.map((e) => e.customer_id),
    ),
  ]);
  return { company, customers };
}

/** What an invoice email shows of its invoice when its facts were not written with it (`invoice.issued`). */
function invoiceFacts(invoice: InvoiceRow | undefined): Record<string, unknown> {
  if (!invoice) return {};
  return {
    total: invoice.total,
    amountDue: amountDue(invoice).toString(),
    currency: invoice.currency,
    dueDate: invoice.due_date?.toISOString() ?? null,
  };
}

async function parts(deps: AppDeps, email: EmailRow, customerName: string, company: Company) {
  if (email.subject && email.html && email.text_body)
    return { subject: email.subject, html: email.html, text: email.text_body };
  const invoiceId = typeof email.data.invoiceId === 'string' ? email.data.invoiceId : undefined;
  const invoice = invoiceId ? await findInvoice(deps.db, invoiceId) : undefined;
  const product =
    typeof email.data.productId === 'string' ? await getProduct(deps.db, email.data.productId) : undefined;
  const content = messageContent(email.type, {
    data: { ...invoiceFacts(invoice), ...(product ? { productName: product.name } : {}), ...email.data },
    company,
    customerName,
    invoiceNumber: invoice?.invoice_number,
    hostedUrl: invoice ? await hostedUrlOf(deps.db, deps.config, invoice) : null,
  });
  return {
    subject: content.subject,
    html: renderEmailHtml(content, company),
    text: renderEmailText(content, company),
  };
}

export async function composeEmail(deps: AppDeps, email: EmailRow, context: ComposeContext): Promise<Composition> {
  // A customer gone since the claim is looked for again, and refused as before (not found).
  const customer = context.customers.get(email.customer_id) ?? (await findCustomer(deps.db, email.customer_id));
  const attachments: ComposedEmail['attachments'] = [];
  if (email.type === 'invoice.issued') {
    const pdf = await getInvoicePdf(deps.db, String(email.data.invoiceId), { waitMs: 0 });
    if (pdf.kind !== 'ready') return { kind: 'waiting', reason: 'waiting for the invoice PDF' };
    attachments.push({ filename: pdf.filename, content: pdf.pdf, contentType: 'application/pdf' });
  }
  const { subject, html, text } = await parts(deps, email, customer.name, context.company);
  return { kind: 'ready', email: { to: email.to_address ?? customer.email, subject, html, text, attachments } };
}
