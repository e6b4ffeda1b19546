/** `/admin/invoices` (console.md "money"): the list with its filters, the create form, and the CSV export. */
import { statusWords } from '../components/labels.ts';
import { createInvoiceBody, INVOICE_STATUSES, MAX_LINE_ITEMS } from '../../invoices/schema.ts';
import { amountDue } from '../../pricing/amount-due.ts';
import { customerNames } from '../../customers/service.ts';
import { INVOICE_SORT_KEYS, invoiceTotals, listInvoiceSummaries } from '../../invoices/service.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { createAdminInvoice } from '../../settlement/admin-invoice.ts';
import { Field, Form, kept, type FormState } from '../components/Form.tsx';
import { date, dateTime, money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { nextPageUrl, Table } from '../components/Table.tsx';
import { field, type FormValues } from '../http/form.ts';
import { createFormQuery, createFormUrl } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { invoiceActions } from './invoices-actions.tsx';
import { invoicePage } from './invoices-detail.tsx';
import { invoicesExport } from './invoices-export.tsx';
import { invoicesQuery, listFilters, serviceFilters } from './invoices-query.ts';
import type { InvoiceRow } from './invoices-types.ts';
import { FilterForm, firstPage, withFilters } from './invoices-filters.tsx';
import { CustomerChoice, listOrder, pickCustomer, SortProblem, Totals, listTotals } from './list-helpers.tsx';

const CREATE_FORM = 'create-invoice';
const EMPTY_LINE_ROWS = 3;
const LINE_FIELDS = ['description', 'quantity', 'unitPrice'] as const;
/** The name of the create form's "Add a line" button: posted with it, the form only grows (C-8, no script). */
const ADD_LINE = '_addLine';

/** The list's filters, and `create` (the page opens its create form, started with the filter's customer). */
const invoicesPageQuery = invoicesQuery.extend(createFormQuery.shape);

/** The posted line rows as typed, holes (rows never sent) left out. */
function postedLines(form: FormValues): Record<string, string>[] {
  const rows = Array.isArray(form.lineItems) ? form.lineItems : [];
  return rows
    .filter((row): row is FormValues => typeof row === 'object' && row !== null && !Array.isArray(row))
    .map((row) =>
      Object.fromEntries(LINE_FIELDS.map((name) => [name, typeof row[name] === 'string' ? (row[name] as string) : ''])),
    );
}

/**
 * The form as the API's JSON body: rows left fully empty are ignored; a row with a description or price but no
 * quantity is one unit. Number() keeps a non-number as NaN so the schema names the field.
 */
export function invoiceBodyOf(form: FormValues) {
  const lineItems = postedLines(form)
    .filter((row) => LINE_FIELDS.some((name) => row[name]!.trim() !== ''))
    .map((row) => ({
      description: row.description,
      quantity: row.quantity!.trim() === '' ? 1 : Number(row.quantity),
      unitPrice: row.unitPrice!.trim() === '' ? undefined : row.unitPrice!.trim(),
    }));
  return {
    customerId: field(form, 'customerId')?.trim(),
    currency: field(form, 'currency')?.trim().toUpperCase(),
    dueDate: field(form, 'dueDate')?.trim(),
    status: field(form, 'status'),
    taxRate: field(form, 'taxRate')?.trim(),
    lineItems,
  };
}

/** This page with its create form open and started for a customer (the customer page's "New invoice"). */
export const newInvoiceUrl = (customerId: string) => createFormUrl('/admin/invoices', CREATE_FORM, customerId);

/** The form as typed with one more (empty) line row, up to the API's limit. */
function withOneMoreLine(form: FormValues): FormValues {
  return { ...form, lineItems: [...postedLines(form), {}].slice(0, MAX_LINE_ITEMS) };
}

function CreateInvoiceForm({
  csrf,
  state,
  customerId,
  open,
}: {
  csrf: string;
  state?: FormState;
  customerId?: string;
  open: boolean;
}) {
  const mine = state?.name === CREATE_FORM ? state : undefined;
  const typed = mine ? postedLines(mine.values) : [];
  const rows = Math.min(MAX_LINE_ITEMS, Math.max(EMPTY_LINE_ROWS, typed.length));
  const v = (name: string, fallback = '') => kept(mine, CREATE_FORM, name, fallback);
  // The fragment of formaction is kept by the browser for the page that comes back, which scrolls to the new row.
  const addLine =
    rows < MAX_LINE_ITEMS ? (
      <button
        type="submit"
        class="secondary"
        name={ADD_LINE}
        value="1"
        formaction={`/admin/invoices#line-${rows + 1}`}
        formnovalidate
      >
        Add a line
      </button>
    ) : null;
  return (
    <details id={CREATE_FORM} open={mine || open ? true : undefined}>
      <summary>Create an invoice</summary>
      <Form name={CREATE_FORM} action="/admin/invoices" csrf={csrf} state={mine} submit="Create invoice" more={addLine}>
        <Field label="Customer ID" name="customerId" value={v('customerId', customerId ?? '')} required state={mine} />
        <Field label="Currency" name="currency" value={v('currency', 'USD')} state={mine} />
        <Field label="Due date" name="dueDate" type="date" value={v('dueDate')} state={mine} />
        <Field label="Status" name="status" value={v('status', 'draft')} options={['draft', 'issued']} state={mine} />
        <Field label="Tax rate (%)" name="taxRate" value={v('taxRate')} state={mine} />
        {Array.from({ length: rows }, (_, i) => (
          <fieldset class="line-row" id={`line-${i + 1}`}>
            <legend>{`Line ${i + 1}`}</legend>
            <Field label="Description" name={`lineItems[${i}][description]`} value={typed[i]?.description ?? ''} />
            <Field label="Quantity" name={`lineItems[${i}][quantity]`} type="number" value={typed[i]?.quantity ?? ''} />
            <Field label="Unit price" name={`lineItems[${i}][unitPrice]`} value={typed[i]?.unitPrice ?? ''} />
          </fieldset>
        ))}
      </Form>
    </details>
  );
}

/** The list's sortable columns by key (C-15), as their headers read. */
const SORT_LABELS = {
  number: 'Number',
  status: 'Status',
  total: 'Total',
  amountDue: 'Amount due',
  dueDate: 'Due date',
  createdAt: 'Created',
};

/** What an aging link narrowed the list to, in words. */
function agingWords(query: { aging?: string; currency?: string }): string {
  const bucket = query.aging === 'current' ? 'not yet due' : `${query.aging} days past due`;
  return `Open invoices${query.currency ? ` in ${query.currency}` : ''}${query.aging ? `, ${bucket}` : ''}.`;
}

export const invoicesPage = definePage({
  path: '/admin/invoices',
  query: invoicesPageQuery,
  async render({ deps, query, viewer, notice, state }) {
    const pick = await pickCustomer(deps.db, query);
    const filters = serviceFilters({ ...query, customerId: pick.kind === 'id' ? pick.customerId : undefined });
    const params = listFilters(query);
    const order = listOrder('/admin/invoices', params, {
      sort: query.sort,
      keys: INVOICE_SORT_KEYS,
      labels: SORT_LABELS,
    });
    const [{ rows, hasMore }, totals] =
      pick.kind === 'id'
        ? await Promise.all([
            listInvoiceSummaries(deps.db, { ...firstPage(query.startingAfter), sort: order.sort }, filters),
            listTotals((cap) => invoiceTotals(deps.db, filters, cap)),
          ])
        : [{ rows: [], hasMore: false }, []];
    const names = await customerNames(
      deps.db,
      rows.map((r) => r.customer_id),
    );
    return (
      <Layout title="Invoices" viewer={viewer} section="Invoices" notice={notice}>
        <h1>Invoices</h1>
        <CreateInvoiceForm
          csrf={viewer.csrf}
          state={state}
          customerId={query.customerId}
          open={query.create !== undefined}
        />
        <FilterForm
          action="/admin/invoices"
          statuses={INVOICE_STATUSES}
          values={query}
          exportPath="/admin/invoices/export.csv"
        />
        {query.aging || query.currency ? <p class="muted">{agingWords(query)}</p> : null}
        <CustomerChoice
          pick={pick}
          linkTo={(id) => withFilters('/admin/invoices', { ...query, customer: undefined, customerId: id })}
        />
        <Totals
          totals={totals}
          noun={['invoice', 'invoices']}
          sums={(r) => [
            ['total', r.total],
            ['amount due', r.amountDue],
          ]}
        />
        <SortProblem problem={order.problem} />
        <div class="wide words">
          <Table
            rows={rows}
            empty="No invoices match."
            next={nextPageUrl('/admin/invoices', order.pageParams, rows.at(-1)?.id, hasMore)}
            sorting={order.sorting}
            stack
            columns={[
              {
                header: 'Number',
                sort: 'number',
                cell: (i: InvoiceRow) => (
                  <a class="nowrap" href={`/admin/invoices/${i.id}`}>
                    {i.invoice_number}
                  </a>
                ),
              },
              {
                header: 'Customer',
                cell: (i) => (
                  <a href={`/admin/customers/${i.customer_id}`}>{names.get(i.customer_id) ?? i.customer_id}</a>
                ),
              },
              { header: 'Status', sort: 'status', cell: (i) => <span class="status">{statusWords(i.status)}</span> },
              { header: 'Total', sort: 'total', numeric: true, cell: (i) => money(i.total, i.currency) },
              {
                header: 'Amount due',
                sort: 'amountDue',
                numeric: true,
                cell: (i) => money(amountDue(i).toString(), i.currency),
              },
              { header: 'Due date', sort: 'dueDate', nowrap: true, cell: (i) => date(i.due_date) },
              { header: 'Created', sort: 'createdAt', nowrap: true, cell: (i) => dateTime(i.created_at) },
            ]}
          />
        </div>
      </Layout>
    );
  },
});

export const createInvoiceAction = defineAction({
  path: '/admin/invoices',
  form: CREATE_FORM,
  page: invoicesPage,
  async run({ deps, form, actor }) {
    if (form[ADD_LINE] !== undefined) return { again: withOneMoreLine(form) };
    const body = parseOrThrow(createInvoiceBody, invoiceBodyOf(form), 'body');
    const { invoice } = await createAdminInvoice(deps.db, body, actor, { settings: deps.config });
    return {
      redirect: `/admin/invoices/${invoice.id}`,
      notice: `Invoice ${invoice.invoice_number} created (${invoice.status}).`,
    };
  },
});

/** The export before the invoice page: `/admin/invoices/:id` would take `export.csv` as an id. */
export { invoicesExport };

export const invoiceRoutes = [invoicesExport, invoicesPage, createInvoiceAction, invoicePage, ...invoiceActions];
