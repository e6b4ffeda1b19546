/**
 * The sections of an invoice's page (invoices-detail.tsx): amounts, payments and their refunds, credit notes, events
 * and their webhook deliveries.
 */
import type { AuditRow } from '../../audit/repo.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { invoiceTaxes, taxNote } from '../../invoices/taxes.ts';
import { taxBasis } from '../../invoices/pdf/template.ts';
import { formatMoney, money as decimal } from '../../money.ts';
import type { FormState } from '../components/Form.tsx';
import { dateTime, money } from '../components/format.ts';
import { label, statusWords } from '../components/labels.ts';
import { Table } from '../components/Table.tsx';
import { FORMS, RefundForm } from './invoices-forms.tsx';
import type {
  CreditNoteRow,
  DeliveryRow,
  EventRow,
  InvoiceRow,
  LineItemRow,
  PaymentRow,
  RefundRow,
} from './invoices-types.ts';

export interface InvoicePageData {
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

const refundable = (p: PaymentRow) => decimal(p.amount).minus(p.refunded_amount).gt(0);

/**
 * T-7: one row per rate (`VAT DE 19% on 100.00`), or a bare Tax row for an untaxed invoice; then the reverse-charge
 * note under the amounts (TaxNote).
 */
function taxRows(invoice: InvoiceRow): [string, string][] {
  const taxes = invoiceTaxes(invoice);
  if (taxes.length === 0) return [['Tax', money(invoice.tax_amount, invoice.currency)]];
  return taxes.map((t) => [
    `${taxBasis(t, invoice.currency)}${t.inclusive ? ' (included)' : ''}`,
    money(t.amount, invoice.currency),
  ]);
}

export function TaxNote({ invoice }: { invoice: InvoiceRow }) {
  const note = taxNote(invoice);
  return note ? <p class="tax-note">{note}</p> : null;
}

/**
 * The invoice's amounts. "Credited (credit notes)" is what its credit notes credited, wherever it went: a note on
 * a paid invoice goes to store credit and lowers nothing on the invoice, so the invoice's own `credited_amount`
 * would read 0.00 above a 5.00 note (issue 34); the part that went to store credit is said beside it.
 */
export function Amounts({ invoice, creditNotes }: { invoice: InvoiceRow; creditNotes: CreditNoteRow[] }) {
  const m = (v: string) => money(v, invoice.currency);
  const credited = creditNotes.reduce((sum, n) => sum.plus(n.amount), decimal(0));
  const toBalance = creditNotes.reduce((sum, n) => sum.plus(n.to_balance), decimal(0));
  return (
    <dl class="props amounts">
      <dt>Subtotal</dt>
      <dd class="num">{m(invoice.subtotal)}</dd>
      {taxRows(invoice).map(([label, amount]) => (
        <>
          <dt>{label}</dt>
          <dd class="num">{amount}</dd>
        </>
      ))}
      <dt>Total</dt>
      <dd class="num">{m(invoice.total)}</dd>
      <dt>Credit applied</dt>
      <dd class="num">{m(invoice.credit_applied)}</dd>
      <dt>Credited (credit notes)</dt>
      <dd class="num">
        {m(formatMoney(credited, invoice.currency))}
        {toBalance.gt(0) ? (
          <span class="hint">{` of which ${m(formatMoney(toBalance, invoice.currency))} to store credit`}</span>
        ) : null}
      </dd>
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

/** A reason as the finance team reads it: its code in words, then the text. */
const reasonText = (r: { reason: string | null; reason_code: string | null }) =>
  [label(r.reason_code), r.reason ?? ''].filter(Boolean).join(': ');

export function Payments({
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
        stack
        rows={data.payments}
        empty="No payments."
        columns={[
          { header: 'Received', nowrap: true, cell: (p: PaymentRow) => dateTime(p.received_at) },
          { header: 'Method', cell: (p) => label(p.payment_method) },
          { header: 'Provider reference', cell: (p) => <span class="nowrap">{p.provider_reference ?? ''}</span> },
          { header: 'Note', cell: (p) => p.note ?? '' },
          { header: 'Amount', numeric: true, cell: (p) => money(p.amount, p.currency) },
          { header: 'Refunded', numeric: true, cell: (p) => money(p.refunded_amount, p.currency) },
          { header: 'Status', cell: (p) => <span class="status">{statusWords(p.status)}</span> },
          {
            header: 'Refund',
            cell: (p) => <RefundForm payment={p} refundable={refundable(p)} csrf={csrf} state={refundState(p)} />,
          },
        ]}
      />
    </div>
  );
}

export function Refunds({ data }: { data: InvoicePageData }) {
  const rows = data.payments.flatMap((p) => (data.refunds.get(p.id) ?? []).map((r) => ({ ...r, payment: p })));
  return (
    <div class="wide">
      <Table
        stack
        rows={rows}
        empty="No refunds."
        columns={[
          { header: 'Created', nowrap: true, cell: (r) => dateTime(r.created_at) },
          {
            header: 'Payment',
            cell: (r) => (
              <>
                {`${label(r.payment.payment_method)} `}
                {r.payment.provider_reference ? <span class="nowrap">{r.payment.provider_reference}</span> : null}
                {` (${money(r.payment.amount, r.currency)})`}
              </>
            ),
          },
          { header: 'Amount', numeric: true, cell: (r) => money(r.amount, r.currency) },
          { header: 'Reason', cell: (r) => reasonText(r) },
          { header: 'Status', cell: (r) => <span class="status">{statusWords(r.status)}</span> },
        ]}
      />
    </div>
  );
}

export function CreditNotes({ rows }: { rows: CreditNoteRow[] }) {
  return (
    <div class="wide">
      <Table
        stack
        rows={rows}
        empty="No credit notes."
        columns={[
          { header: 'Number', cell: (n: CreditNoteRow) => <span class="nowrap">{n.number}</span> },
          { header: 'Created', nowrap: true, cell: (n) => dateTime(n.created_at) },
          { header: 'Amount', numeric: true, cell: (n) => money(n.amount, n.currency) },
          {
            header: 'To store credit',
            numeric: true,
            cell: (n) => money(formatMoney(n.to_balance, n.currency), n.currency),
          },
          { header: 'Reason', cell: (n) => reasonText(n) },
        ]}
      />
    </div>
  );
}

export function Events({ events }: { events: EventRow[] }) {
  return (
    <div class="wide">
      <Table
        stack
        rows={events}
        empty="No events."
        columns={[
          { header: 'Created', nowrap: true, cell: (e: EventRow) => dateTime(e.created_at) },
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

export function Deliveries({ rows }: { rows: DeliveryRow[] }) {
  return (
    <div class="wide">
      <Table
        stack
        rows={rows}
        empty="No webhook deliveries."
        columns={[
          { header: 'Created', nowrap: true, cell: (d: DeliveryRow) => dateTime(d.created_at) },
          {
            header: 'Event',
            cell: (d) => (
              <>
                {d.event_type} <code>{d.event_id}</code>
              </>
            ),
          },
          { header: 'Endpoint', cell: (d) => d.endpoint_url },
          { header: 'Status', cell: (d) => <span class="status">{statusWords(d.status)}</span> },
          { header: 'Attempts', numeric: true, cell: (d) => String(d.attempt_count) },
          { header: 'Delivered', cell: (d) => dateTime(d.delivered_at) },
        ]}
      />
    </div>
  );
}
