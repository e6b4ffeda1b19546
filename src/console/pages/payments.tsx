/** `/admin/payments` (console.md "money"): payments with their refunds, filtered in SQL, and the CSV export. */
import { label, statusWords } from '../components/labels.ts';
import type { Db } from '../../db/knex.ts';
import { customerNames } from '../../customers/service.ts';
import { findInvoicesByIds } from '../../invoices/service.ts';
import { formatMoney } from '../../money.ts';
import { listPayments, PAYMENT_SORT_KEYS, paymentTotals } from '../../payments/service.ts';
import { namesInBatch } from './export-names.ts';
import { CustomerChoice, listOrder, pickCustomer, SortProblem, Totals, listTotals } from './list-helpers.tsx';
import { refundsOfPayments } from '../../refunds/service.ts';
import { dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { defineExport, definePage } from '../http/route.ts';
import {
  createdRange,
  everyBatch,
  FilterForm,
  filterValues,
  firstPage,
  moneyListQuery,
  type MoneyListFilters,
  withFilters,
} from './invoices-filters.tsx';
import { PAYMENT_STATUSES, type InvoiceRow, type PaymentRow, type RefundRow } from './invoices-types.ts';

const paymentsQuery = moneyListQuery(PAYMENT_STATUSES);

/** The list's sortable columns by key (C-15), as their headers read. */
const SORT_LABELS = {
  receivedAt: 'Received',
  method: 'Method',
  reference: 'Provider reference',
  amount: 'Amount',
  refunded: 'Refunded',
  status: 'Status',
  createdAt: 'Recorded',
};

const serviceFilters = (q: MoneyListFilters) => ({
  status: q.status as PaymentRow['status'] | undefined,
  customerId: q.customerId,
  ...createdRange(q),
});

/** What a page of payments names: invoices, customers and refunds, each read once for the whole page. */
async function relatedTo(db: Db, rows: PaymentRow[]) {
  const [invoices, names, refunds] = await Promise.all([
    findInvoicesByIds(
      db,
      rows.map((p) => p.invoice_id),
    ),
    customerNames(
      db,
      rows.map((p) => p.customer_id),
    ),
    refundsOfPayments(
      db,
      rows.map((p) => p.id),
    ),
  ]);
  return { invoices, names, refunds };
}

function RefundList({ refunds }: { refunds: RefundRow[] }) {
  if (refunds.length === 0) return null;
  return (
    <ul class="plain">
      {refunds.map((r) => (
        <li>
          <span class="nowrap">{money(r.amount, r.currency)}</span>
          {' · '}
          <span class="nowrap">{dateTime(r.created_at)}</span>
          {`${r.reason ? ` · ${r.reason}` : ''}${r.status === 'pending' ? ' · pending' : ''}`}
        </li>
      ))}
    </ul>
  );
}

export const paymentsPage = definePage({
  path: '/admin/payments',
  query: paymentsQuery,
  async render({ deps, query, viewer, notice }) {
    const pick = await pickCustomer(deps.db, query);
    const filters = serviceFilters({ ...query, customerId: pick.kind === 'id' ? pick.customerId : undefined });
    const params = filterValues(query);
    const order = listOrder('/admin/payments', params, {
      sort: query.sort,
      keys: PAYMENT_SORT_KEYS,
      labels: SORT_LABELS,
    });
    const [{ rows, hasMore }, totals] =
      pick.kind === 'id'
        ? await Promise.all([
            listPayments(deps.db, { ...firstPage(query.startingAfter), sort: order.sort }, filters),
            listTotals((cap) => paymentTotals(deps.db, filters, cap)),
          ])
        : [{ rows: [], hasMore: false }, []];
    const { invoices, names, refunds } = await relatedTo(deps.db, rows);
    const invoiceOf = (p: PaymentRow): InvoiceRow | undefined => invoices.get(p.invoice_id);
    return (
      <Layout title="Payments" viewer={viewer} section="Payments" notice={notice}>
        <h1>Payments</h1>
        <FilterForm
          action="/admin/payments"
          statuses={PAYMENT_STATUSES}
          values={query}
          exportPath="/admin/payments/export.csv"
          dated="Received"
        />
        <p class="export">
          <a href={withFilters('/admin/refunds/export.csv', { ...query, status: undefined })} download>
            Export refunds CSV
          </a>
        </p>
        <CustomerChoice
          pick={pick}
          linkTo={(id) => withFilters('/admin/payments', { ...query, customer: undefined, customerId: id })}
        />
        <Totals
          totals={totals}
          noun={['payment', 'payments']}
          sums={(r) => [
            ['amount', r.amount],
            ['refunded', r.refunded],
          ]}
        />
        <SortProblem problem={order.problem} />
        <div class="wide words">
          <Table
            rows={rows}
            empty="No payments match."
            next={nextPageUrl('/admin/payments', order.pageParams, rows.at(-1)?.id, hasMore)}
            sorting={order.sorting}
            stack
            columns={[
              {
                header: 'Received',
                sort: 'receivedAt',
                nowrap: true,
                cell: (p: PaymentRow) => dateTime(p.received_at),
              },
              {
                header: 'Invoice',
                cell: (p) => (
                  <a class="nowrap" href={`/admin/invoices/${p.invoice_id}`}>
                    {invoiceOf(p)?.invoice_number ?? p.invoice_id}
                  </a>
                ),
              },
              {
                header: 'Customer',
                cell: (p) => (
                  <a href={`/admin/customers/${p.customer_id}`}>{names.get(p.customer_id) ?? p.customer_id}</a>
                ),
              },
              { header: 'Method', sort: 'method', cell: (p) => label(p.payment_method) },
              {
                header: 'Provider reference',
                sort: 'reference',
                cell: (p) => <span class="nowrap">{p.provider_reference ?? ''}</span>,
              },
              { header: 'Amount', sort: 'amount', numeric: true, cell: (p) => money(p.amount, p.currency) },
              {
                header: 'Refunded',
                sort: 'refunded',
                numeric: true,
                cell: (p) => money(p.refunded_amount, p.currency),
              },
              { header: 'Status', sort: 'status', cell: (p) => <span class="status">{statusWords(p.status)}</span> },
              { header: 'Refunds', cell: (p) => <RefundList refunds={refunds.get(p.id) ?? []} /> },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

const PAYMENT_CSV_HEADER = [
  'id',
  'invoiceId',
  'invoiceNumber',
  'customerId',
  'customerName',
  'paymentMethod',
  'providerReference',
  'currency',
  'amount',
  'refundedAmount',
  'status',
  'note',
  'receivedAt (UTC)',
  'createdAt (UTC)',
] as const;

export const paymentsExport = defineExport({
  path: '/admin/payments/export.csv',
  filename: 'payments.csv',
  query: paymentsQuery,
  header: PAYMENT_CSV_HEADER,
  async *rows({ deps, query }) {
    // A customer picked by name exports that customer's rows; a name matching none or several exports none.
    const pick = await pickCustomer(deps.db, query);
    if (pick.kind !== 'id') return;
    const filters = serviceFilters({ ...query, customerId: pick.customerId });
    for await (const batch of everyBatch((page) => listPayments(deps.db, page, filters))) {
      const { customerName, invoiceNumber } = await namesInBatch(deps.db, batch);
      for (const p of batch) {
        yield [
          p.id,
          p.invoice_id,
          invoiceNumber(p),
          p.customer_id,
          customerName(p),
          p.payment_method,
          p.provider_reference,
          p.currency,
          formatMoney(p.amount, p.currency),
          formatMoney(p.refunded_amount, p.currency),
          p.status,
          p.note,
          p.received_at,
          p.created_at,
        ];
      }
    }
  },
});

export const paymentRoutes = [paymentsPage, paymentsExport];
