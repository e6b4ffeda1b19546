/** The sections of a customer's page: each a table of what other domains hold for the customer, newest first. */
import { label, statusWords } from '../components/labels.ts';
import type { ComponentChildren } from 'preact';
import type { listApiKeys } from '../../api-keys/service.ts';
import type { listCreditLedger } from '../../credits/service.ts';
import type { getCustomer } from '../../reporting/customer-view.ts';
import type { listCustomerEvents } from '../../events/service.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import type { listInvoices } from '../../invoices/service.ts';
import type { listLicenses } from '../../licenses/service.ts';
import { effectiveStatus } from '../../licenses/status.ts';
import type { listPayments } from '../../payments/service.ts';
import type { findPlans } from '../../plans/service.ts';
import { date, money } from '../components/format.ts';
import { Table } from '../components/Table.tsx';
import { Nowrap, When } from './customers-parts.tsx';

// Row types as the services answer them (a console page reads no domain's repo, not even for a type).
type RowOf<F extends (...args: never[]) => Promise<{ rows: unknown[] }>> = Awaited<ReturnType<F>>['rows'][number];
type ApiKeyRow = RowOf<typeof listApiKeys>;
type LedgerRow = RowOf<typeof listCreditLedger>;
type EventRow = RowOf<typeof listCustomerEvents>;
type InvoiceRow = RowOf<typeof listInvoices>['invoice'];
type LicenseRow = RowOf<typeof listLicenses>;
type PaymentRow = RowOf<typeof listPayments>;
type Plans = Awaited<ReturnType<typeof findPlans>>;
type SubscriptionRow = Awaited<ReturnType<typeof getCustomer>>['subscriptions'][number];

/** A section of the page: its heading, its table, and where to see more than the newest page. */
function Section({
  id,
  title,
  more,
  children,
}: {
  id: string;
  title: string;
  more?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section id={id} class="words" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{title}</h2>
      {children}
      {more ? <p class="more">{more}</p> : null}
    </section>
  );
}

const Status = ({ value }: { value: string }) => <span class="status nowrap">{statusWords(value)}</span>;
const invoiceLink = (id: string, number: string | undefined) => (
  <a class="nowrap" href={`/admin/invoices/${id}`}>
    {number ?? 'Invoice'}
  </a>
);

export function LedgerSection({
  rows,
  hasMore,
  numbers,
}: {
  rows: LedgerRow[];
  hasMore: boolean;
  numbers: Map<string, string>;
}) {
  return (
    <Section id="ledger" title="Credit ledger" more={hasMore ? 'Showing the newest 50 entries.' : undefined}>
      <Table
        rows={rows}
        empty="No store credit yet."
        columns={[
          { header: 'Date', cell: (e) => <When value={e.created_at} /> },
          { header: 'Kind', cell: (e) => <Nowrap>{e.kind}</Nowrap> },
          { header: 'Description', cell: (e) => e.description ?? '' },
          {
            header: 'Invoice',
            cell: (e) => (e.invoice_id ? invoiceLink(e.invoice_id, numbers.get(e.invoice_id)) : ''),
          },
          { header: 'Amount', numeric: true, cell: (e) => money(e.amount, e.currency) },
          { header: 'Balance after', numeric: true, cell: (e) => money(e.balance_after, e.currency) },
        ]}
      />
    </Section>
  );
}

export function SubscriptionsSection({ rows, plans }: { rows: SubscriptionRow[]; plans: Plans }) {
  return (
    <Section id="subscriptions" title="Subscriptions">
      <Table
        rows={rows}
        empty="No subscriptions."
        columns={[
          {
            header: 'Plan',
            cell: (s) => <a href={`/admin/subscriptions/${s.id}`}>{plans.get(s.plan_id)?.name ?? s.plan_id}</a>,
          },
          { header: 'Status', cell: (s) => <Status value={s.status} /> },
          { header: 'Cycle', cell: (s) => <Nowrap>{s.billing_cycle}</Nowrap> },
          {
            header: 'Current period',
            cell: (s) => (
              <>
                <Nowrap>{date(s.current_period_start)}</Nowrap> – <Nowrap>{date(s.current_period_end)}</Nowrap>
              </>
            ),
          },
          { header: 'Trial end', cell: (s) => <Nowrap>{date(s.trial_end)}</Nowrap> },
          { header: 'Cancels at period end', cell: (s) => (s.cancel_at_period_end ? 'yes' : 'no') },
        ]}
      />
    </Section>
  );
}

export function InvoicesSection({
  rows,
  hasMore,
  customerId,
}: {
  rows: InvoiceRow[];
  hasMore: boolean;
  customerId: string;
}) {
  return (
    <Section
      id="invoices"
      title="Invoices"
      more={
        hasMore ? <a href={`/admin/invoices?customerId=${customerId}`}>All invoices of this customer</a> : undefined
      }
    >
      <Table
        rows={rows}
        empty="No invoices."
        columns={[
          { header: 'Number', cell: (i) => invoiceLink(i.id, i.invoice_number) },
          { header: 'Status', cell: (i) => <Status value={i.status} /> },
          { header: 'Total', numeric: true, cell: (i) => money(i.total, i.currency) },
          { header: 'Amount due', numeric: true, cell: (i) => money(amountDue(i).toString(), i.currency) },
          { header: 'Due', cell: (i) => <Nowrap>{date(i.due_date)}</Nowrap> },
          { header: 'Created', cell: (i) => <When value={i.created_at} /> },
        ]}
      />
    </Section>
  );
}

export function PaymentsSection({
  rows,
  hasMore,
  numbers,
  customerId,
}: {
  rows: PaymentRow[];
  hasMore: boolean;
  numbers: Map<string, string>;
  customerId: string;
}) {
  return (
    <Section
      id="payments"
      title="Payments"
      more={
        hasMore ? <a href={`/admin/payments?customerId=${customerId}`}>All payments of this customer</a> : undefined
      }
    >
      <Table
        rows={rows}
        empty="No payments."
        columns={[
          { header: 'Received', cell: (p) => <When value={p.received_at} /> },
          { header: 'Invoice', cell: (p) => invoiceLink(p.invoice_id, numbers.get(p.invoice_id)) },
          { header: 'Amount', numeric: true, cell: (p) => money(p.amount, p.currency) },
          { header: 'Refunded', numeric: true, cell: (p) => money(p.refunded_amount, p.currency) },
          { header: 'Method', cell: (p) => <Nowrap>{label(p.payment_method)}</Nowrap> },
          { header: 'Reference', cell: (p) => p.provider_reference ?? '' },
          { header: 'Status', cell: (p) => <Status value={p.status} /> },
        ]}
      />
    </Section>
  );
}

export function LicensesSection({
  rows,
  productNames,
  now,
}: {
  rows: LicenseRow[];
  productNames: Map<string, string>;
  now: Date;
}) {
  return (
    <Section id="licenses" title="Licenses">
      <Table
        rows={rows}
        empty="No licenses."
        columns={[
          { header: 'Key', cell: (l) => <code class="nowrap">{l.license_key}</code> },
          { header: 'Product', cell: (l) => productNames.get(l.product_id) ?? l.product_id },
          { header: 'Status', cell: (l) => <Status value={effectiveStatus(l, now)} /> },
          {
            header: 'Activations',
            numeric: true,
            cell: (l) => `${l.current_activations} / ${l.max_activations ?? '∞'}`,
          },
          { header: 'Expires', cell: (l) => <When value={l.expires_at} /> },
        ]}
      />
    </Section>
  );
}

/** API keys by name and prefix; the secret is never stored, so never shown. */
export function ApiKeysSection({ rows }: { rows: ApiKeyRow[] }) {
  return (
    <Section id="api-keys" title="API keys">
      <Table
        rows={rows}
        empty="No API keys."
        columns={[
          { header: 'Name', cell: (k) => k.name },
          { header: 'Prefix', cell: (k) => <code class="nowrap">{k.prefix}</code> },
          { header: 'Created', cell: (k) => <When value={k.created_at} /> },
          { header: 'Last used', cell: (k) => <When value={k.last_used_at} /> },
          { header: 'Expires', cell: (k) => <When value={k.expires_at} /> },
          { header: 'Revoked', cell: (k) => (k.revoked_at ? <When value={k.revoked_at} /> : 'no') },
        ]}
      />
    </Section>
  );
}

/** A one-line reading of an event's payload: the fields a person looks for (D-74 payload shapes). */
function eventSummary(data: Record<string, unknown>): string {
  const text = (key: string) =>
    typeof data[key] === 'string' || typeof data[key] === 'number' ? String(data[key]) : undefined;
  const amount = text('amount') && text('currency') ? money(text('amount')!, text('currency')!) : undefined;
  return [
    text('invoiceNumber'),
    amount,
    text('licenseKey'),
    text('status') && `status ${text('status')}`,
    text('attempt') && `attempt ${text('attempt')}`,
    text('failureReason'),
  ]
    .filter(Boolean)
    .join(' · ');
}

/** The events table; a subscription's page shows its own under another title. */
export function TimelineSection({
  rows,
  numbers,
  next,
  id = 'timeline',
  title = 'Timeline',
}: {
  rows: EventRow[];
  numbers: Map<string, string>;
  next?: string;
  id?: string;
  title?: string;
}) {
  return (
    <Section
      id={id}
      title={title}
      more={
        next ? (
          <a href={next} rel="next">
            Older events
          </a>
        ) : undefined
      }
    >
      <Table
        rows={rows}
        empty="No events yet."
        columns={[
          { header: 'When', cell: (e) => <When value={e.created_at} /> },
          { header: 'Event', cell: (e) => <code class="nowrap">{e.type}</code> },
          { header: 'Details', cell: (e) => eventSummary(e.data) },
          {
            header: 'Invoice',
            cell: (e) =>
              typeof e.data.invoiceId === 'string' ? invoiceLink(e.data.invoiceId, numbers.get(e.data.invoiceId)) : '',
          },
        ]}
      />
    </Section>
  );
}
