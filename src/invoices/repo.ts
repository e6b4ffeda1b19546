import type { Knex } from 'knex';
import { AMOUNT_DUE_SQL, agingFilter, type AgingFilter } from './repo-filters.ts';
import { customerScopeSql, type CustomerScope } from '../db/clock-scope.ts';
import { datesAsText } from '../db/json-dates.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery, type SortColumns } from '../db/paginate.ts';

import type { InvoiceChanges, InvoiceInsert, InvoiceRow, LineItemRow } from './rows.ts';

export type { InvoiceChanges, InvoiceInsert, InvoiceRow, InvoiceStatus, LineItemRow } from './rows.ts';

export async function findInvoiceRow(db: Db, id: string): Promise<InvoiceRow | undefined> {
  return db('invoices').where({ id }).first();
}

/** The invoice locked for the rest of the transaction: every change to one invoice happens one at a time. */
export async function lockInvoiceRow(db: Db, id: string): Promise<InvoiceRow | undefined> {
  return db('invoices').where({ id }).forUpdate().first();
}

/** Applies changes and bumps content_version, which keys the stored PDF (D-53). */
export async function updateInvoiceRow(db: Db, id: string, changes: InvoiceChanges): Promise<InvoiceRow> {
  const [row] = await db('invoices')
    .where({ id })
    .update({ ...changes, content_version: db.raw('content_version + 1'), updated_at: db.fn.now() })
    .returning('*');
  return row as InvoiceRow;
}

export async function listLineItemRows(db: Db, invoiceIds: string[]): Promise<LineItemRow[]> {
  if (invoiceIds.length === 0) return [];
  return db('invoice_line_items')
    .whereIn('invoice_id', invoiceIds)
    .orderBy([{ column: 'invoice_id' }, { column: 'position' }]);
}

/** What a list of invoices may be narrowed by; `createdBefore` is exclusive. */
export interface InvoiceListFilters {
  status?: string;
  customerId?: string;
  /** A subscription's invoices (the index invoices_subscription_periods): its periods and prorations. */
  subscriptionId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  /** Only invoices the customer was sent (no drafts): the customer's own view (invoices/customer-view.ts). */
  sentOnly?: boolean;
  /** An aging bucket (C-16): open invoices in a currency due in [dueFrom, dueBefore) (`repo-filters.ts`). */
  aging?: AgingFilter;
}

/** The columns the console's invoice list sorts by (C-15); an undated invoice sorts after every due date. */
export const INVOICE_SORTS: SortColumns = {
  number: 'invoice_number',
  status: 'status',
  total: 'total',
  amountDue: AMOUNT_DUE_SQL,
  dueDate: "coalesce(due_date, 'infinity'::timestamptz)",
  createdAt: 'created_at',
};

export async function listInvoiceRows(db: Db, page: PageQuery, filters: InvoiceListFilters): Promise<Page<InvoiceRow>> {
  return paginate<InvoiceRow>(filteredInvoices(db, filters).select('*'), 'invoices', page, INVOICE_SORTS);
}

/** The invoices a list's filters keep, for its page and its totals. */
export function filteredInvoices(db: Db, filters: InvoiceListFilters): Knex.QueryBuilder {
  const query = db('invoices');
  if (filters.status) query.where({ status: filters.status });
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.subscriptionId) query.where({ subscription_id: filters.subscriptionId });
  if (filters.createdFrom) query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdBefore) query.where('created_at', '<', filters.createdBefore);
  if (filters.sentOnly) query.whereNot({ status: 'draft' });
  if (filters.aging) agingFilter(query, filters.aging);
  return query;
}

export async function findInvoiceRows(db: Db, ids: string[]): Promise<InvoiceRow[]> {
  if (ids.length === 0) return [];
  return db('invoices').whereIn('id', [...new Set(ids)]);
}

/** Issued or overdue invoices of a customer in one currency with something left to pay, oldest first. */
export async function listOpenInvoiceRows(db: Db, customerId: string, currency: string): Promise<InvoiceRow[]> {
  return db('invoices')
    .where({ customer_id: customerId, currency })
    .whereIn('status', ['issued', 'overdue'])
    .whereRaw('total - amount_paid - credit_applied - credited_amount > 0')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .forUpdate();
}

/** A fully formed invoice row but for its number and the columns' defaults: decided by the caller (issue.ts). */
export type InvoiceBulkInsert = Omit<InvoiceInsert, 'invoice_number'> &
  Pick<InvoiceRow, 'id' | 'credit_applied' | 'issued_at' | 'paid_at' | 'created_at'>;

/** A line of a new invoice; `position` numbers each invoice's lines from 1. */
export type LineItemInsert = Omit<LineItemRow, 'id'>;

/** The foreign key that refuses an invoice of an unknown customer (createInvoice answers customer_not_found). */
export const INVOICE_CUSTOMER_FK = 'invoices_customer_id_fkey';

/**
 * Lines of invoices in one statement, in the order given. The lines of invoices being issued are written before
 * the invoices (invoices/issue.ts): a line's foreign key to its invoice is checked at commit (deferred), so a line
 * still cannot commit without its invoice.
 */
export async function insertLineItems(db: Db, lines: LineItemInsert[]): Promise<LineItemRow[]> {
  if (lines.length === 0) return [];
  const result = await db.raw<{ rows: LineItemRow[] }>(
    `insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount, tax_rate_ids,
                                     usage)
     select l.invoice_id, l.position, l.description, l.quantity, l.unit_price, l.amount, l.tax_rate_ids, l.usage
       from rows from (jsonb_to_recordset(?::jsonb) as (invoice_id uuid, position integer, description text,
            quantity integer, unit_price numeric, amount numeric, tax_rate_ids uuid[], usage jsonb)) with ordinality
            as l(invoice_id, position, description, quantity, unit_price, amount, tax_rate_ids, usage, n)
      order by l.n
     returning *`,
    [JSON.stringify(lines)],
  );
  return result.rows;
}

/**
 * The year's counter (D-50): claims `count` numbers of one kind, seq_before + 1 .. seq_before + count, by updating
 * the counter row, which stays locked until the transaction ends (numbers unique) and comes back on a rollback
 * (numbers gapless). Bindings: kind, year, count, count.
 */
const CLAIM_NUMBERS = `counter as (
       insert into document_counters (kind, year, last_seq) values (?, ?, ?)
       on conflict (kind, year) do update set last_seq = document_counters.last_seq + excluded.last_seq
       returning kind, year, last_seq - ?::integer as seq_before
     )`;

/** The n-th number claimed, `{KIND}-{YEAR}-{SEQ}` (D-50, D-58): SEQ four digits, wider past 9999. */
const NTH_NUMBER = `counter.kind || '-' || counter.year || '-'
         || lpad((counter.seq_before + v.n)::text, greatest(4, length((counter.seq_before + v.n)::text)), '0')`;

/**
 * Takes the year's invoice numbers and inserts the invoices with them, in the order of `rows`, in one statement:
 * the statement that locks the counter row, which every creation of the year then waits for until this
 * transaction ends (see invoices/issue.ts for what may follow it). Answers the stored rows in the order of `rows`.
 */
export async function insertNumberedInvoices(
  db: Db,
  year: number,
  rows: InvoiceBulkInsert[],
  kind: 'INV' | 'TST' = 'INV',
): Promise<InvoiceRow[]> {
  if (rows.length === 0) return [];
  const result = await db.raw<{ rows: InvoiceRow[] }>(
    `with ${CLAIM_NUMBERS}
     insert into invoices (id, customer_id, subscription_id, invoice_number, status, currency, tax_rate, subtotal,
                           tax_amount, total, credit_applied, due_date, issued_at, paid_at, period_start, period_end,
                           created_at, taxes, tax_exempt, buyer_tax_id)
     select v.id, v.customer_id, v.subscription_id, ${NTH_NUMBER}, v.status, v.currency, v.tax_rate, v.subtotal,
            v.tax_amount, v.total, v.credit_applied, v.due_date, v.issued_at, v.paid_at, v.period_start, v.period_end,
            v.created_at, v.taxes, v.tax_exempt, v.buyer_tax_id
       from rows from (jsonb_to_recordset(?::jsonb) as (id uuid, customer_id uuid, subscription_id uuid, status text,
            currency text, tax_rate numeric, subtotal numeric, tax_amount numeric, total numeric,
            credit_applied numeric, due_date timestamptz, issued_at timestamptz, paid_at timestamptz,
            period_start timestamptz, period_end timestamptz, created_at timestamptz, taxes jsonb, tax_exempt text,
            buyer_tax_id text))
            with ordinality as v(id, customer_id, subscription_id, status, currency, tax_rate, subtotal, tax_amount,
            total, credit_applied, due_date, issued_at, paid_at, period_start, period_end, created_at, taxes,
            tax_exempt, buyer_tax_id, n)
      cross join counter
      order by v.n
     returning *`,
    [kind, year, rows.length, rows.length, JSON.stringify(datesAsText(rows))],
  );
  const byId = new Map(result.rows.map((r) => [r.id, r]));
  return rows.map((r) => byId.get(r.id)!);
}

/** The next number of one kind (a credit note), taken in the caller's transaction under the rules of CLAIM_NUMBERS. */
export async function claimDocumentNumber(db: Db, kind: 'INV' | 'CN' | 'TCN', year: number): Promise<string> {
  const result = await db.raw<{ rows: { number: string }[] }>(
    `with ${CLAIM_NUMBERS}
     select ${NTH_NUMBER} as number from counter cross join (values (1)) as v(n)`,
    [kind, year, 1, 1],
  );
  return result.rows[0]!.number;
}

/**
 * Up to `limit` issued invoices whose due date passed by `asOf`, moved to `overdue` (D-52) and
 * answered; rows another transaction holds are skipped (it is paying or changing them), so two
 * sweeps never mark one invoice twice.
 */
export async function markOverdueInvoiceRows(
  db: Db,
  asOf: Date,
  limit: number,
  scope: CustomerScope,
): Promise<InvoiceRow[]> {
  const inScope = customerScopeSql(scope, 'invoices.customer_id');
  const result = await db.raw<{ rows: InvoiceRow[] }>(
    `with due as (
       select id from invoices
        where status = 'issued' and due_date < ? and ${inScope.sql}
        order by due_date
        limit ?
        for update skip locked
     )
     update invoices i
        set status = 'overdue', overdue_at = ?, content_version = i.content_version + 1, updated_at = now()
      -- The ids as an array, so each row is found by its key whatever the planner guesses of \`due\` (a test clock's
      -- fresh invoices, not yet analysed, made it join every issued invoice with every due one: 1.2 s for 500). No
      -- second status test: \`due\` holds the rows locked as issued, and a test the partial index invoices_due can
      -- answer led the planner, misjudging fresh rows, to scan every issued invoice past due and search the array for
      -- each (bench/test-clocks.ts: 12,000 real ones per statement of a clock's advance).
      where i.id = any(array(select id from due))
     returning i.*`,
    [asOf, ...inScope.bindings, limit, asOf],
  );
  return result.rows;
}

/** Which of these (subscription, period start) pairs already have their invoice (D-82). */
export async function findInvoicedPeriodRows(
  db: Db,
  periods: { subscriptionId: string; periodStart: Date }[],
): Promise<Set<string>> {
  if (periods.length === 0) return new Set();
  const result = await db.raw<{ rows: { subscription_id: string; period_start: Date }[] }>(
    // One probe of the unique period index per pair (a lateral subquery with a limit is not flattened into a join): the
    // planner cannot size the JSON's rows and would otherwise hash them against a scan of every invoice.
    `select i.subscription_id, i.period_start
       from jsonb_to_recordset(?::jsonb) as v(subscription_id uuid, period_start timestamptz)
       cross join lateral (select i.subscription_id, i.period_start from invoices i
                            where i.subscription_id = v.subscription_id and i.period_start = v.period_start limit 1) i`,
    [
      JSON.stringify(
        datesAsText(periods.map((p) => ({ subscription_id: p.subscriptionId, period_start: p.periodStart }))),
      ),
    ],
  );
  return new Set(result.rows.map((r) => periodKey(r.subscription_id, r.period_start)));
}

export const periodKey = (subscriptionId: string, start: Date) => `${subscriptionId}@${start.toISOString()}`;

/**
 * What is left to pay on the issued and overdue invoices of each of these customers, per currency (the
 * amountDue rule, summed in SQL for a page of customers at once); currencies with nothing left are left out.
 */
export async function openAmountRows(
  db: Db,
  customerIds: string[],
): Promise<{ customer_id: string; currency: string; amount: string }[]> {
  if (customerIds.length === 0) return [];
  const result = await db.raw<{ rows: { customer_id: string; currency: string; amount: string }[] }>(
    `select customer_id, currency,
            sum(greatest(total - amount_paid - credit_applied - credited_amount, 0))::text as amount
       from invoices
      where customer_id = any(?::uuid[]) and status in ('issued', 'overdue')
      group by customer_id, currency
     having sum(greatest(total - amount_paid - credit_applied - credited_amount, 0)) > 0
      order by customer_id, currency`,
    [customerIds],
  );
  return result.rows;
}

/** The numbers of these invoices, in one query. */
export async function invoiceNumberRows(db: Db, ids: string[]): Promise<{ id: string; invoice_number: string }[]> {
  if (ids.length === 0) return [];
  return db('invoices').whereIn('id', ids).select('id', 'invoice_number');
}
