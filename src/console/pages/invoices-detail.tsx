/**
 * `/admin/invoices/:id` (console.md "money"): header, lines, amounts, payments with their refunds, credit
 * notes, the PDF, the invoice's events and their webhook deliveries, the actions on it (C-6) and its audit entries
 * (C-11).
 */
import { statusWords } from '../components/labels.ts';
import { auditEntriesOf } from '../../audit/service.ts';
import { listCreditNotes } from '../../credit-notes/service.ts';
import { notFound } from '../../errors.ts';
import { listInvoiceEvents } from '../../events/service.ts';
import type { Db } from '../../db/knex.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { invoicePdfPath } from '../../invoices/schema.ts';
import { customerNames } from '../../customers/service.ts';
import { getInvoice } from '../../invoices/service.ts';
import { formatMoney } from '../../money.ts';
import { findPayment, listPayments } from '../../payments/service.ts';
import { refundsOfPayments } from '../../refunds/service.ts';
import { listDeliveriesOfEvents } from '../../webhooks/service.ts';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { date, dateTime, money, unitPrice } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { LineUsage } from './subscription-usage.tsx';
import { uuidParam } from '../http/params.ts';
import { definePage, type PageInput } from '../http/route.ts';
import { CreditNoteForm, PaymentForm, StatusForm } from './invoices-forms.tsx';
import type { LineItemRow } from './invoices-types.ts';
import {
  Amounts,
  TaxNote,
  Payments,
  Refunds,
  CreditNotes,
  Events,
  Deliveries,
  type InvoicePageData,
} from './invoices-detail-parts.tsx';

/** What an invoice's page shows at most of its own lists; an invoice never comes near these in practice. */
const RELATED_LIMIT = 500;
const EVENT_LIMIT = 100;

async function loadInvoicePage(db: Db, id: string): Promise<InvoicePageData> {
  const { invoice, lines } = await getInvoice(db, uuidParam(id, 'Invoice'));
  const related = { limit: RELATED_LIMIT, newestFirst: true };
  const [names, payments, creditNotes, events, audit] = await Promise.all([
    customerNames(db, [invoice.customer_id]),
    listPayments(db, related, { invoiceId: invoice.id }),
    listCreditNotes(db, related, { invoiceId: invoice.id }),
    listInvoiceEvents(db, invoice.id, EVENT_LIMIT),
    auditEntriesOf(db, 'invoice', invoice.id),
  ]);
  const [refunds, deliveries] = await Promise.all([
    refundsOfPayments(
      db,
      payments.rows.map((p) => p.id),
    ),
    listDeliveriesOfEvents(
      db,
      events.map((e) => e.id),
    ),
  ]);
  return {
    invoice,
    lines,
    customerName: names.get(invoice.customer_id),
    payments: payments.rows,
    refunds,
    creditNotes: creditNotes.rows,
    events,
    deliveries,
    audit,
  };
}

/** The invoice's page; `refundOf` names the payment whose refund form a refusal re-renders. */
async function renderInvoicePage({ deps, viewer, notice, state }: PageInput<unknown>, id: string, refundOf?: string) {
  const data = await loadInvoicePage(deps.db, id);
  const { invoice } = data;
  const due = formatMoney(amountDue(invoice), invoice.currency);
  return (
    <Layout title={`Invoice ${invoice.invoice_number}`} viewer={viewer} section="Invoices" notice={notice}>
      <h1>{`Invoice ${invoice.invoice_number}`}</h1>
      <dl class="props">
        <dt>Status</dt>
        <dd>
          <span class="status">{statusWords(invoice.status)}</span>
        </dd>
        <dt>Customer</dt>
        <dd>
          <a href={`/admin/customers/${invoice.customer_id}`}>{data.customerName ?? invoice.customer_id}</a>
        </dd>
        <dt>Currency</dt>
        <dd>{invoice.currency}</dd>
        <dt>Created</dt>
        <dd>{dateTime(invoice.created_at)}</dd>
        <dt>Issued</dt>
        <dd>{dateTime(invoice.issued_at) || '—'}</dd>
        <dt>Due date</dt>
        <dd>{date(invoice.due_date) || '—'}</dd>
        {invoice.paid_at ? (
          <>
            <dt>Paid</dt>
            <dd>{dateTime(invoice.paid_at)}</dd>
          </>
        ) : null}
        {invoice.voided_at ? (
          <>
            <dt>Voided</dt>
            <dd>{dateTime(invoice.voided_at)}</dd>
          </>
        ) : null}
        {invoice.period_start ? (
          <>
            <dt>Period</dt>
            <dd>{`${date(invoice.period_start)} to ${date(invoice.period_end)}`}</dd>
          </>
        ) : null}
        <dt>PDF</dt>
        <dd>
          <a href={invoicePdfPath(invoice.id)}>Download PDF</a>
        </dd>
      </dl>
      <h2>Lines</h2>
      <div class="wide">
        <Table
          stack
          rows={data.lines}
          empty="No lines."
          columns={[
            {
              header: 'Description',
              cell: (l: LineItemRow) =>
                l.usage ? (
                  <>
                    {l.description}
                    <LineUsage usage={l.usage} currency={invoice.currency} />
                  </>
                ) : (
                  l.description
                ),
            },
            { header: 'Quantity', numeric: true, cell: (l) => String(l.quantity) },
            { header: 'Unit price', numeric: true, cell: (l) => unitPrice(l.unit_price, invoice.currency) },
            { header: 'Amount', numeric: true, cell: (l) => money(l.amount, invoice.currency) },
          ]}
        />
      </div>
      <h2>Amounts</h2>
      <Amounts invoice={invoice} creditNotes={data.creditNotes} />
      <TaxNote invoice={invoice} />
      <h2>Actions</h2>
      {invoice.status === 'void' && !state ? (
        <p class="empty">A void invoice takes no actions.</p>
      ) : (
        <div class="actions">
          <StatusForm invoice={invoice} csrf={viewer.csrf} state={state} />
          <PaymentForm invoice={invoice} due={due} csrf={viewer.csrf} state={state} />
          <CreditNoteForm invoice={invoice} csrf={viewer.csrf} state={state} />
        </div>
      )}
      <h2>Payments</h2>
      <Payments data={data} csrf={viewer.csrf} state={state} refundOf={refundOf} />
      <h2>Refunds</h2>
      <Refunds data={data} />
      <h2>Credit notes</h2>
      <CreditNotes rows={data.creditNotes} />
      <h2>Events</h2>
      <Events events={data.events} />
      <h2>Webhook deliveries</h2>
      <Deliveries rows={data.deliveries} />
      <AuditTrail rows={data.audit} targetType="invoice" targetId={invoice.id} />
    </Layout>
  );
}

export const invoicePage = definePage({
  path: '/admin/invoices/:id',
  render: (input) => renderInvoicePage(input, input.params.id!),
});

/** Where a refused refund (posted to the payment's URL) is shown again: the page of the payment's invoice. */
export const paymentRefundPage = definePage({
  path: '/admin/payments/:id/refunds',
  async render(input) {
    const payment = await findPayment(input.deps.db, uuidParam(input.params.id, 'Payment'));
    if (!payment) throw notFound('Payment');
    return renderInvoicePage(input, payment.invoice_id, payment.id);
  },
});
