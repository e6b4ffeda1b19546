/**
 * The invoice as one self-contained HTML page for Chromium to print: no scripts, no external resources,
 * every value from the database escaped. Amounts go through formatMoney (the currency's minor units).
 */
import { usageDetailHtml } from './usage-detail.ts';
import type { CustomerRow } from '../../customers/repo.ts';
import { formatMoney, formatUnitPrice, groupDigits, money } from '../../money.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import type { InvoiceRow, LineItemRow } from '../repo.ts';
import { invoiceTaxes, taxNote, type StoredTax } from '../taxes.ts';
import { INVOICE_STATUS_LABEL } from '../status-label.ts';

export interface Seller {
  name: string;
  address: string;
  email: string;
  taxId: string;
}

export interface InvoiceDocument {
  invoice: InvoiceRow;
  lines: LineItemRow[];
  customer: Pick<CustomerRow, 'name' | 'email' | 'company' | 'billing_address' | 'tax_id'>;
  seller: Seller;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Escaped, with line breaks kept (addresses are typed on several lines). */
function multiline(value: string): string {
  return value
    .split(/\r\n|\r|\n/)
    .map((l) => escapeHtml(l.trim()))
    .filter((l) => l !== '')
    .join('<br>');
}

/** An amount as printed on the invoice: grouped digits in the invoice's currency's minor units. */
export function displayAmount(amount: Parameters<typeof formatMoney>[0], currency: string): string {
  return groupDigits(formatMoney(amount, currency));
}

const DATE_FORMAT = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'long',
  day: 'numeric',
  timeZone: 'UTC',
});

export function displayDate(value: Date | null | undefined): string {
  return value ? DATE_FORMAT.format(value) : '—';
}

/** "8.2500" -> "8.25", "0" -> "0". */
function displayRate(rate: string): string {
  return money(rate).toString();
}

const STYLE = `
  @page { size: A4; margin: 18mm 16mm 20mm; }
  * { box-sizing: border-box; }
  html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { margin: 0; font-family: "Open Sans", "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 10pt;
    line-height: 1.45; color: #1f2933; }
  header { display: flex; justify-content: space-between; align-items: flex-start; border-bottom: 2px solid #1f2933;
    padding-bottom: 12pt; }
  .seller-name { font-size: 16pt; font-weight: 700; margin: 0 0 4pt; }
  .muted { color: #616e7c; }
  .doc-title { text-align: right; }
  .doc-title h1 { font-size: 22pt; letter-spacing: 2pt; margin: 0; font-weight: 700; }
  .doc-number { font-size: 11pt; font-weight: 600; margin-top: 2pt; }
  .status { display: inline-block; margin-top: 6pt; padding: 2pt 8pt; border-radius: 10pt; font-size: 8.5pt;
    font-weight: 700; letter-spacing: 0.5pt; border: 1px solid currentColor; }
  .status-draft { color: #616e7c; } .status-issued { color: #2563eb; } .status-paid { color: #15803d; }
  .status-overdue { color: #b91c1c; } .status-void { color: #7c2d12; }
  .parties { display: flex; justify-content: space-between; gap: 24pt; margin: 18pt 0; }
  .parties section { flex: 1; }
  .label { text-transform: uppercase; font-size: 7.5pt; letter-spacing: 0.8pt; color: #616e7c; margin: 0 0 4pt;
    font-weight: 600; }
  .customer-name { font-weight: 700; font-size: 11pt; }
  dl.meta { display: grid; grid-template-columns: auto auto; gap: 2pt 12pt; margin: 0; justify-content: end; }
  dl.meta dt { color: #616e7c; text-align: right; } dl.meta dd { margin: 0; text-align: right; font-weight: 600; }
  table.lines { width: 100%; border-collapse: collapse; margin-top: 6pt; }
  table.lines th { text-align: left; font-size: 8pt; text-transform: uppercase; letter-spacing: 0.6pt; color: #616e7c;
    border-bottom: 1px solid #cbd2d9; padding: 6pt 4pt; }
  table.lines td { padding: 7pt 4pt; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
  table.lines tr { break-inside: avoid; }
  .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
  .description { word-break: break-word; }
  .usage { margin: 3pt 0 0; padding-left: 10pt; font-size: 8pt; color: #52606d; }
  .totals { margin-left: auto; margin-top: 12pt; width: 55%; border-collapse: collapse; break-inside: avoid; }
  .totals td { padding: 4pt 4pt; }
  .totals tr.total td { border-top: 1px solid #1f2933; font-weight: 700; font-size: 11pt; padding-top: 6pt; }
  .totals tr.due td { background: #f0f4f8; font-weight: 700; font-size: 12pt; padding: 8pt 4pt; }
  .taxes { margin-top: 10pt; margin-left: auto; width: 55%; font-size: 9pt; break-inside: avoid; }
  .taxes ul { margin: 2pt 0 0; padding-left: 12pt; }
  .tax-note { margin-top: 10pt; font-weight: 700; }
  footer { margin-top: 28pt; padding-top: 8pt; border-top: 1px solid #e4e7eb; font-size: 8.5pt; color: #616e7c; }
`;

/** T-7: a rate's line as the PDF, the hosted page and the console print it: `VAT DE 19% on 100.00: 19.00`. */
export function taxLine(tax: StoredTax, currency: string): string {
  const line = `${taxBasis(tax, currency)}: ${displayAmount(tax.amount, currency)}`;
  return tax.inclusive ? `${line} (included in prices)` : line;
}

/** A rate and what it was charged on: `VAT DE 19% on 100.00`. */
export function taxBasis(tax: StoredTax, currency: string): string {
  return `${tax.name} ${displayRate(tax.percentage)}% on ${displayAmount(tax.taxableAmount, currency)}`;
}

/** The invoice page. Everything interpolated below passes through escapeHtml (or a formatter of ours). */
export function renderInvoiceHtml(doc: InvoiceDocument): string {
  const { invoice, lines, customer, seller } = doc;
  const currency = invoice.currency;
  const amount = (v: string) => escapeHtml(displayAmount(v, currency));
  const unitPrice = (v: string) => escapeHtml(groupDigits(formatUnitPrice(v, currency)));
  const e = escapeHtml;

  const sellerLines = [
    seller.address ? `<div>${multiline(seller.address)}</div>` : '',
    seller.email ? `<div>${e(seller.email)}</div>` : '',
    seller.taxId ? `<div>Tax ID: ${e(seller.taxId)}</div>` : '',
  ].join('');

  const customerLines = [
    customer.company ? `<div>${e(customer.company)}</div>` : '',
    customer.billing_address ? `<div>${multiline(customer.billing_address)}</div>` : '',
    `<div>${e(customer.email)}</div>`,
    customer.tax_id ? `<div>Tax ID: ${e(customer.tax_id)}</div>` : '',
  ].join('');

  const usageAmount = (v: string) => displayAmount(v, currency);
  const rows = lines
    .map(
      (l) => `<tr>
        <td class="description">${e(l.description)}${usageDetailHtml(l.usage, e, usageAmount)}</td>
        <td class="num">${e(l.quantity)}</td>
        <td class="num">${unitPrice(l.unit_price)}</td>
        <td class="num">${amount(l.amount)}</td>
      </tr>`,
    )
    .join('');

  const optional = (label: string, value: string) =>
    money(value).isZero() ? '' : `<tr><td>${label}</td><td class="num">-${amount(value)}</td></tr>`;
  const due = displayAmount(amountDue(invoice), currency);
  // T-7: one line per rate under the totals; the Tax row names the one percent of an invoice that has one (D-51).
  const taxes = invoiceTaxes(invoice);
  const taxLabel =
    taxes.length === 1 && taxes[0]!.taxRateId === null ? `Tax (${e(displayRate(invoice.tax_rate))}%)` : 'Tax';
  const breakdown = taxes.map((t) => `<li>${e(taxLine(t, currency))}</li>`).join('');
  const note = taxNote(invoice);
  const taxSummary = [
    taxes.length > 0 ? `<section class="taxes"><p class="label">Tax breakdown</p><ul>${breakdown}</ul></section>` : '',
    note ? `<p class="tax-note">${e(note)}</p>` : '',
  ].join('');

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Invoice ${e(invoice.invoice_number)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <div>
    <p class="seller-name">${e(seller.name)}</p>
    <div class="muted">${sellerLines}</div>
  </div>
  <div class="doc-title">
    <h1>INVOICE</h1>
    <div class="doc-number">${e(invoice.invoice_number)}</div>
    <div class="status status-${e(invoice.status)}">${e(INVOICE_STATUS_LABEL[invoice.status] ?? invoice.status)}</div>
  </div>
</header>
<div class="parties">
  <section>
    <p class="label">Bill to</p>
    <div class="customer-name">${e(customer.name)}</div>
    <div>${customerLines}</div>
  </section>
  <section>
    <dl class="meta">
      <dt>Invoice number</dt><dd>${e(invoice.invoice_number)}</dd>
      <dt>Issue date</dt><dd>${e(displayDate(invoice.issued_at ?? invoice.created_at))}</dd>
      <dt>Due date</dt><dd>${e(displayDate(invoice.due_date))}</dd>
      ${invoice.paid_at ? `<dt>Paid on</dt><dd>${e(displayDate(invoice.paid_at))}</dd>` : ''}
      <dt>Status</dt><dd>${e(INVOICE_STATUS_LABEL[invoice.status] ?? invoice.status)}</dd>
      <dt>Currency</dt><dd>${e(currency)}</dd>
    </dl>
  </section>
</div>
<table class="lines">
  <thead>
    <tr><th>Description</th><th class="num">Quantity</th><th class="num">Unit price</th><th class="num">Amount</th></tr>
  </thead>
  <tbody>${rows}</tbody>
</table>
<table class="totals">
  <tr><td>Subtotal</td><td class="num">${amount(invoice.subtotal)}</td></tr>
  <tr><td>${taxLabel}</td><td class="num">${amount(invoice.tax_amount)}</td></tr>
  <tr class="total"><td>Total</td><td class="num">${e(currency)} ${amount(invoice.total)}</td></tr>
  ${optional('Amount paid', invoice.amount_paid)}
  ${optional('Credit applied', invoice.credit_applied)}
  ${optional('Credit notes', invoice.credited_amount)}
  <tr class="due"><td>Amount due</td><td class="num">${e(currency)} ${e(due)}</td></tr>
</table>
${taxSummary}
<footer>
  ${e(seller.name)}${seller.email ? ` · ${e(seller.email)}` : ''} · Invoice ${e(invoice.invoice_number)}${
    invoice.status === 'void' ? ' · This invoice has been voided and is not payable.' : ''
  }
</footer>
</body>
</html>`;
}
