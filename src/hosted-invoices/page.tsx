/**
 * The hosted invoice page (H-2): the seller, the invoice's amounts and lines, Download PDF, and while something is
 * due on an issued or overdue invoice one `Pay with ...` button per configured provider. Works without script;
 * its only stylesheet is served by the app (K-2).
 */
import type { ComponentChildren } from 'preact';
import { date, money, unitPrice } from '../console/components/format.ts';
import type { InvoiceRow, LineItemRow } from '../invoices/repo.ts';
import { money as toDecimal } from '../money.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { taxLine } from '../invoices/pdf/template.ts';
import { invoiceTaxes, taxNote } from '../invoices/taxes.ts';
import type { Company } from '../settings/company.ts';
import { INVOICE_STATUS_LABEL } from '../invoices/status-label.ts';

export const HOSTED_STYLESHEET_PATH = '/i/assets/hosted.css';

export interface PayOption {
  provider: string;
  label: string;
}

export interface HostedInvoiceView {
  company: Company;
  customerName: string;
  invoice: InvoiceRow;
  lines: LineItemRow[];
  token: string;
  payOptions: PayOption[];
  /** A refusal to show above the invoice (a checkout the provider refused). */
  problem?: string | undefined;
}

function HostedLayout({ title, company, children }: { title: string; company?: Company; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{company ? `${title} · ${company.name}` : title}</title>
        <link rel="stylesheet" href={HOSTED_STYLESHEET_PATH} />
      </head>
      <body>
        <main>{children}</main>
      </body>
    </html>
  );
}

export function HostedInvoicePage(view: HostedInvoiceView) {
  const { invoice, company } = view;
  const m = (v: string) => money(v, invoice.currency);
  const due = amountDue(invoice);
  // T-7: one line per rate, as the PDF prints them, and a reverse charge's note.
  const taxes = invoiceTaxes(invoice);
  const note = taxNote(invoice);
  const payable = (invoice.status === 'issued' || invoice.status === 'overdue') && due.gt(0);
  return (
    <HostedLayout title={`Invoice ${invoice.invoice_number}`} company={company}>
      <header class="seller">
        <strong>{company.name}</strong>
        {company.address && <span>{company.address}</span>}
        {company.taxId && <span> · Tax id {company.taxId}</span>}
      </header>
      {view.problem && (
        <p class="notice" role="alert">
          {view.problem}
        </p>
      )}
      <section class="card">
        <h1>Invoice {invoice.invoice_number}</h1>
        <span class={`status status-${invoice.status}`}>{INVOICE_STATUS_LABEL[invoice.status]}</span>
        {invoice.status === 'paid' ? (
          <p class="amount-due">Paid {date(invoice.paid_at)}</p>
        ) : invoice.status === 'void' ? (
          <p class="amount-due">Void</p>
        ) : (
          <p class="amount-due">{m(due.toString())} due</p>
        )}
        <dl class="facts">
          <dt>Billed to</dt>
          <dd>{view.customerName}</dd>
          <dt>Issued</dt>
          <dd>{date(invoice.issued_at)}</dd>
          <dt>Due date</dt>
          <dd>{date(invoice.due_date) || 'On receipt'}</dd>
          {invoice.status === 'paid' && (
            <>
              <dt>Payment date</dt>
              <dd>{date(invoice.paid_at)}</dd>
            </>
          )}
        </dl>
        <div class="actions">
          {payable &&
            view.payOptions.map((option) => (
              <form key={option.provider} method="post" action={`/i/${view.token}/pay/${option.provider}`}>
                <button class="button primary" type="submit">
                  Pay with {option.label}
                </button>
              </form>
            ))}
          <a class="button" href={`/i/${view.token}/pdf`}>
            Download PDF
          </a>
        </div>
      </section>
      <section class="card">
        <table class="lines">
          <thead>
            <tr>
              <th>Description</th>
              <th class="num detail">Qty</th>
              <th class="num detail">Unit price</th>
              <th class="num">Amount</th>
            </tr>
          </thead>
          <tbody>
            {view.lines.map((line) => (
              <tr key={line.id}>
                <td>
                  {line.description}
                  <span class="line-detail">
                    {line.quantity} × {unitPrice(line.unit_price, invoice.currency)}
                  </span>
                </td>
                <td class="num detail">{line.quantity}</td>
                <td class="num detail">{unitPrice(line.unit_price, invoice.currency)}</td>
                <td class="num">{m(line.amount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <table class="totals">
          <tbody>
            <Total label="Subtotal" value={m(invoice.subtotal)} />
            <Total
              label={taxes.length === 1 && taxes[0]!.taxRateId === null ? `Tax (${invoice.tax_rate}%)` : 'Tax'}
              value={m(invoice.tax_amount)}
            />
            <Total label="Total" value={m(invoice.total)} strong />
            <Total label="Amount paid" value={m(invoice.amount_paid)} />
            {!isZero(invoice.credit_applied) && <Total label="Credit applied" value={m(invoice.credit_applied)} />}
            {!isZero(invoice.credited_amount) && <Total label="Credit notes" value={m(invoice.credited_amount)} />}
            <Total label="Amount due" value={m(due.toString())} strong />
          </tbody>
        </table>
        {taxes.length > 0 && (
          <div class="taxes">
            <h2>Tax breakdown</h2>
            <ul>
              {taxes.map((t) => (
                <li>{taxLine(t, invoice.currency)}</li>
              ))}
            </ul>
          </div>
        )}
        {note && <p class="tax-note">{note}</p>}
      </section>
      <footer>
        {company.name}
        {company.email && `\nQuestions about this invoice? Write to ${company.email}`}
      </footer>
    </HostedLayout>
  );
}

const isZero = (v: string) => toDecimal(v).isZero();

function Total({ label, value, strong }: { label: string; value: string; strong?: boolean }) {
  return (
    <tr class={strong ? 'total' : undefined}>
      <th>{label}</th>
      <td class="num">{value}</td>
    </tr>
  );
}

/** Not found, a replaced link, too many tries: a page that says only that. */
export function HostedMessagePage({ title, message }: { title: string; message: string }) {
  return (
    <HostedLayout title={title}>
      <section class="card">
        <h1>{title}</h1>
        <p>{message}</p>
      </section>
    </HostedLayout>
  );
}
