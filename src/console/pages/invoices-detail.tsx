/**
 * `/admin/invoices/:id` (console.md "money"): header, lines, amounts, payments with their refunds, credit
 * notes, the PDF, the invoice's events and their webhook deliveries, the actions on it (C-6) and its audit entries
 * (C-11).
 */
import type { AuditRow } from '../../audit/repo.ts';
import { auditEntriesOf } from '../../audit/service.ts';
import { listCreditNotes } from '../../credit-notes/service.ts';
import { notFound } from '../../errors.ts';
import { listInvoiceEvents } from '../../events/service.ts';
import type { Db } from '../../db/knex.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { invoicePdfPath } from '../../invoices/schema.ts';
import { customerNames } from '../../customers/service.ts';
import { getInvoice } from '../../invoices/service.ts';
import { formatMoney, money as decimal } from '../../money.ts';
import { findPayment, listPayments } from '../../payments/service.ts';
import { refundsOfPayments } from '../../refunds/service.ts';
import { listDeliveriesOfEvents } from '../../webhooks/service.ts';
import type { FormState } from '../components/Form.tsx';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { date, dateTime, money, unitPrice } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { Table } from '../components/Table.tsx';
import { uuidParam } from '../http/params.ts';
import { definePage, type PageInput } from '../http/route.ts';
import { CreditNoteForm, FORMS, PaymentForm, RefundForm, StatusForm } from './invoices-forms.tsx';
import type {
  CreditNoteRow,
  DeliveryRow,
  EventRow,
  InvoiceRow,
  LineItemRow,
  PaymentRow,
  RefundRow,
} from './invoices-types.ts';

/** What an invoice's page shows at most of its own lists; an invoice never comes near these in practice. */
const RELATED_LIMIT = 500;
const EVENT_LIMIT = 100;

interface InvoicePageData {
  invoice: InvoiceRow;
  lines: LineItemRow[];
  customerName: string | undefined;
  payments: PaymentRow[];
  refunds: Map<string, RefundRow[]>;
  creditNotes: CreditNoteRow[];
  events: EventRow[];
  deliveries: DeliveryRow[];
  audit: AuditRow[];
}

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

const refundable = (p: PaymentRow) => decimal(p.amount).minus(p.refunded_amount).gt(0);

function Amounts({ invoice }: { invoice: InvoiceRow }) {
  const m = (v: string) => money(v, invoice.currency);
  return (
    <dl class="props amounts">
      <dt>Subtotal</dt>
      <dd class="num">{m(invoice.subtotal)}</dd>
      <dt>{`Tax (${invoice.tax_rate}%)`}</dt>
      <dd class="num">{m(invoice.tax_amount)}</dd>
      <dt>Total</dt>
      <dd class="num">{m(invoice.total)}</dd>
      <dt>Credit applied</dt>
      <dd class="num">{m(invoice.credit_applied)}</dd>
      <dt>Credited (credit notes)</dt>
      <dd class="num">{m(invoice.credited_amount)}</dd>
      <dt>Amount paid</dt>
      <dd class="num">{m(invoice.amount_paid)}</dd>
      <dt>
        <strong>Amount due</strong>
      </dt>
      <dd class="num">
        <strong>{m(amountDue(invoice).toString())}</strong>
      </dd>
    </dl>
  );
}

function Payments({
  data,
  csrf,
  state,
  refundOf,
}: {
  data: InvoicePageData;
  csrf: string;
  state?: FormState;
  refundOf?: string;
}) {
  const refundState = (p: PaymentRow) => (state?.name === FORMS.refund && refundOf === p.id ? state : undefined);
  return (
    <div class="wide">
      <Table
        rows={data.payments}
        empty="No payments."
        columns={[
          { header: 'Created', cell: (p: PaymentRow) => dateTime(p.created_at) },
          { header: 'Method', cell: (p) => p.payment_method },
          { header: 'Provider reference', cell: (p) => p.provider_reference ?? '' },
          { header: 'Amount', numeric: true, cell: (p) => money(p.amount, p.currency) },
          { header: 'Refunded', numeric: true, cell: (p) => money(p.refunded_amount, p.currency) },
          { header: 'Status', cell: (p) => <span class="status">{p.status}</span> },
          {
            header: 'Refund',
            cell: (p) => <RefundForm payment={p} refundable={refundable(p)} csrf={csrf} state={refundState(p)} />,
          },
        ]}
      />
    </div>
  );
}

function Refunds({ data }: { data: InvoicePageData }) {
  const rows = data.payments.flatMap((p) => (data.refunds.get(p.id) ?? []).map((r) => ({ ...r, payment: p })));
  return (
    <div class="wide">
      <Table
        rows={rows}
        empty="No refunds."
        columns={[
          { header: 'Created', cell: (r) => dateTime(r.created_at) },
          {
            header: 'Payment',
            cell: (r) =>
              `${r.payment.payment_method}${r.payment.provider_reference ? ` ${r.payment.provider_reference}` : ''} ` +
              `(${money(r.payment.amount, r.currency)})`,
          },
          { header: 'Amount', numeric: true, cell: (r) => money(r.amount, r.currency) },
          { header: 'Reason', cell: (r) => r.reason ?? '' },
          { header: 'Status', cell: (r) => <span class="status">{r.status}</span> },
        ]}
      />
    </div>
  );
}

function CreditNotes({ rows }: { rows: CreditNoteRow[] }) {
  return (
    <div class="wide">
      <Table
        rows={rows}
        empty="No credit notes."
        columns={[
          { header: 'Number', cell: (n: CreditNoteRow) => <span class="nowrap">{n.number}</span> },
          { header: 'Created', cell: (n) => dateTime(n.created_at) },
          { header: 'Amount', numeric: true, cell: (n) => money(n.amount, n.currency) },
          {
            header: 'To store credit',
            numeric: true,
            cell: (n) => money(formatMoney(n.to_balance, n.currency), n.currency),
          },
          { header: 'Reason', cell: (n) => n.reason ?? '' },
        ]}
      />
    </div>
  );
}

function Events({ events }: { events: EventRow[] }) {
  return (
    <div class="wide">
      <Table
        rows={events}
        empty="No events."
        columns={[
          { header: 'Created', cell: (e: EventRow) => dateTime(e.created_at) },
          { header: 'Type', cell: (e) => e.type },
          {
            header: 'Amount',
            numeric: true,
            cell: (e) =>
              typeof e.data.amount === 'string' && typeof e.data.currency === 'string'
                ? money(e.data.amount, e.data.currency)
                : '',
          },
          { header: 'Event id', cell: (e) => <code>{e.id}</code> },
        ]}
      />
    </div>
  );
}

function Deliveries({ rows }: { rows: DeliveryRow[] }) {
  return (
    <div class="wide">
      <Table
        rows={rows}
        empty="No webhook deliveries."
        columns={[
          { header: 'Created', cell: (d: DeliveryRow) => dateTime(d.created_at) },
          {
            header: 'Event',
            cell: (d) => (
              <>
                {d.event_type} <code>{d.event_id}</code>
              </>
            ),
          },
          { header: 'Endpoint', cell: (d) => d.endpoint_url },
          { header: 'Status', cell: (d) => <span class="status">{d.status}</span> },
          { header: 'Attempts', numeric: true, cell: (d) => String(d.attempt_count) },
          { header: 'Delivered', cell: (d) => dateTime(d.delivered_at) },
        ]}
      />
    </div>
  );
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
          <span class="status">{invoice.status}</span>
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
          rows={data.lines}
          empty="No lines."
          columns={[
            { header: 'Description', cell: (l: LineItemRow) => l.description },
            { header: 'Quantity', numeric: true, cell: (l) => String(l.quantity) },
            { header: 'Unit price', numeric: true, cell: (l) => unitPrice(l.unit_price, invoice.currency) },
            { header: 'Amount', numeric: true, cell: (l) => money(l.amount, invoice.currency) },
          ]}
        />
      </div>
      <h2>Amounts</h2>
      <Amounts invoice={invoice} />
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
