/**
 * Composes an email row into what is sent (M-3): the recipient (the customer's email), subject, HTML and text parts
 * from the type's template, and the invoice PDF for `invoice.issued`. A PDF not rendered yet is asked of the pdf
 * worker, and the email waits for it rather than going without.
 */
import type { AppDeps } from '../app-deps.ts';
import { findCustomer } from '../customers/service.ts';
import { hostedUrlOf } from '../hosted-invoices/service.ts';
import { getInvoicePdf } from '../invoices/pdf/service.ts';
import { findInvoice } from '../invoices/service.ts';
import { getSettings } from '../settings/service.ts';
import { messageContent, type Company } from './messages.ts';
import type { EmailRow } from './repo.ts';
import { renderEmailHtml, renderEmailText } from './template.tsx';

export interface ComposedEmail {
  to: string;
  subject: string;
  html: string;
  text: string;
  attachments: { filename: string; content: Buffer; contentType: string }[];
}

export type Composition = { kind: 'ready'; email: ComposedEmail } | { kind: 'waiting'; reason: string };

export async function companyDetails(deps: Pick<AppDeps, 'db'>): Promise<Company> {
  const s = await getSettings(deps.db, ['company.name', 'company.email', 'company.address']);
  return { name: s['company.name'], email: s['company.email'], address: s['company.address'] };
}

async function parts(deps: AppDeps, email: EmailRow, customerName: string) {
  if (email.subject && email.html && email.text_body)
    return { subject: email.subject, html: email.html, text: email.text_body };
  const invoiceId = typeof email.data.invoiceId === 'string' ? email.data.invoiceId : undefined;
  const invoice = invoiceId ? await findInvoice(deps.db, invoiceId) : undefined;
  const company = await companyDetails(deps);
  const content = messageContent(email.type, {
    data: email.data,
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

export async function composeEmail(deps: AppDeps, email: EmailRow): Promise<Composition> {
  const customer = await findCustomer(deps.db, email.customer_id);
  const attachments: ComposedEmail['attachments'] = [];
  if (email.type === 'invoice.issued') {
    const pdf = await getInvoicePdf(deps.db, String(email.data.invoiceId), { waitMs: 0 });
    if (pdf.kind !== 'ready') return { kind: 'waiting', reason: 'waiting for the invoice PDF' };
    attachments.push({ filename: pdf.filename, content: pdf.pdf, contentType: 'application/pdf' });
  }
  const { subject, html, text } = await parts(deps, email, customer.name);
  return { kind: 'ready', email: { to: email.to_address ?? customer.email, subject, html, text, attachments } };
}
