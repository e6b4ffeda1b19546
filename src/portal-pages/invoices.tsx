/**
 * `/portal/invoices` (P-3): every invoice the customer was sent, newest first (50 a page, `Older invoices` leads on),
 * with its number, date, status, total and amount due, and `PDF` and `Pay` links to its hosted page.
 */
import { date, money } from '../console/components/format.ts';
import { Table } from '../console/components/Table.tsx';
import type { InvoiceRow } from '../invoices/repo.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { portalInvoices } from '../portal/records.ts';
import { PortalLayout } from './layout.tsx';
import { portalPage } from './route.ts';
import { INVOICE_STATUS_LABEL } from '../invoices/status-label.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function Links({ invoice, url }: { invoice: InvoiceRow; url: string | null | undefined }) {
  if (!url) return null;
  // The invoice's hostedUrl as every answer and email gives it (K-1: under PUBLIC_BASE_URL), not a path of this site.
  const payable = (invoice.status === 'issued' || invoice.status === 'overdue') && amountDue(invoice).gt(0);
  return (
    <span class="row-links">
      <a href={`${url}/pdf`}>PDF</a>
      {payable ? <a href={url}>Pay</a> : null}
    </span>
  );
}

export const invoicesPage = portalPage({
  path: '/portal/invoices',
  async render({ deps, viewer, query }) {
    const after = query.startingAfter && UUID.test(query.startingAfter) ? query.startingAfter : undefined;
    const page = await portalInvoices(deps.db, deps.config, viewer.customerId, after);
    const rows = page.rows;
    const last = rows.at(-1);
    return (
      <PortalLayout title="Invoices" viewer={viewer} section="Invoices">
        <h1>Invoices</h1>
        <Table
          rows={rows}
          stack
          empty="No invoices yet."
          columns={[
            { header: 'Number', cell: (i) => i.invoice_number },
            { header: 'Date', cell: (i) => date(i.issued_at ?? i.created_at) },
            { header: 'Status', cell: (i) => INVOICE_STATUS_LABEL[i.status] },
            { header: 'Total', numeric: true, cell: (i) => money(i.total, i.currency) },
            { header: 'Amount due', numeric: true, cell: (i) => money(amountDue(i).toString(), i.currency) },
            { header: 'Links', cell: (i) => <Links invoice={i} url={page.urls.get(i.id)} /> },
          ]}
          next={page.hasMore && last ? `/portal/invoices?startingAfter=${last.id}` : undefined}
        />
      </PortalLayout>
    );
  },
});
