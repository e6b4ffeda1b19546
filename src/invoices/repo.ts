import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { StatementGuard } from '../db/fast-query.ts';
import { datesAsText } from '../db/json-dates.ts';
import { integerLiteral, jsonLiteral, LiteralValues, textLiteral, type LiteralStatement } from '../db/literal.ts';
import { claimNumbersCte, documentNumberSql } from './numbering.ts';

export type InvoiceStatus = 'draft' | 'issued' | 'paid' | 'overdue' | 'void';

export interface InvoiceRow {
  id: string;
  customer_id: string;
  subscription_id: string | null;
  invoice_number: string;
  status: InvoiceStatus;
  currency: string;
  tax_rate: string;
  subtotal: string;
  tax_amount: string;
  total: string;
  amount_paid: string;
  credit_applied: string;
  credited_amount: string;
  due_date: Date | null;
  issued_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  overdue_at: Date | null;
  period_start: Date | null;
  period_end: Date | null;
  content_version: number;
  created_at: Date;
  updated_at: Date;
}

export interface LineItemRow {
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: number;
  unit_price: string;
  amount: string;
}

export type InvoiceInsert = Pick<
  InvoiceRow,
  | 'customer_id'
  | 'subscription_id'
  | 'invoice_number'
  | 'status'
  | 'currency'
  | 'tax_rate'
  | 'subtotal'
  | 'tax_amount'
  | 'total'
> &
  Partial<Pick<InvoiceRow, 'due_date' | 'issued_at' | 'period_start' | 'period_end' | 'created_at'>>;

export type InvoiceChanges = Partial<
  Pick<
    InvoiceRow,
    | 'status'
    | 'amount_paid'
    | 'credit_applied'
    | 'credited_amount'
    | 'due_date'
    | 'issued_at'
    | 'paid_at'
    | 'voided_at'
    | 'overdue_at'
  >
>;

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
}

export async function listInvoiceRows(db: Db, page: PageQuery, filters: InvoiceListFilters): Promise<Page<InvoiceRow>> {
  const query = db('invoices').select('*');
  if (filters.status) query.where({ status: filters.status });
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.subscriptionId) query.where({ subscription_id: filters.subscriptionId });
  if (filters.createdFrom) query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdBefore) query.where('created_at', '<', filters.createdBefore);
  if (filters.sentOnly) query.whereNot({ status: 'draft' });
  return paginate<InvoiceRow>(query, 'invoices', page);
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

/** A fully formed invoice row but for its number: id, amounts and states decided by the caller (issue.ts). */
export type InvoiceBulkInsert = Omit<InvoiceInsert, 'invoice_number'> &
  Pick<InvoiceRow, 'id' | 'credit_applied' | 'issued_at' | 'paid_at'>;

/** A line of one of the invoices of an insertNumberedInvoices batch; `position` numbers each invoice's lines from 1. */
export type LineItemInsert = Omit<LineItemRow, 'id'>;

/**
 * The foreign key that refuses an invoice of a customer that does not exist (createInvoice answers customer_not_found).
 */
export const INVOICE_CUSTOMER_FK = 'invoices_customer_id_fkey';

/**
 * Numbers, invoices and their lines in ONE statement (D-50): the year's counter claims `rows.length` numbers,
 * given in the order of `rows`, and the same statement writes the invoices with them and their lines. It is
 * the statement that takes the counter's row lock, which every creation of the year queues on until its
 * transaction ends; so the caller runs it after all its reads, locks and computations, and writes only what
 * must carry the numbers (events, audit, credit applications) after it. Answers the stored invoices in the
 * order of `rows` and each one's lines by position.
 */
export async function insertNumberedInvoices(
  db: Db,
  year: number,
  rows: InvoiceBulkInsert[],
  lines: LineItemInsert[],
): Promise<{ invoices: InvoiceRow[]; lines: LineItemRow[] }> {
  if (rows.length === 0) return { invoices: [], lines: [] };
  const sql = numberedInvoicesSql(
    { kind: '?', year: '?', count: '?', countAgain: '?', yearText: '?', rows: '?', lines: '?' },
    [],
  );
  const result = await db.raw<{ rows: NumberedRow[] }>(sql, [
    'INV',
    year,
    rows.length,
    rows.length,
    year,
    JSON.stringify(rows),
    JSON.stringify(lines),
  ]);
  return readNumbered(rows, result.rows);
}

/** What one data-modifying part of another domain adds to a numbering statement (events, an audit row). */
export interface NumberedPart {
  /** CTEs, which may use the invoice's number as `numberSql`. */
  text: string;
  /** A one-row CTE the final select must read (cross join), or none. */
  read?: string;
}

/**
 * insertNumberedInvoices for ONE invoice as one statement whose values are SQL literals (db/literal.ts) kept apart
 * from its text, for the last statement of a hot-lock transaction (db/hot-lock.ts `finish`, which prepares the text
 * once per connection), with `parts` written by the same statement: `parts(numberSql, values)` gets the SQL of the
 * invoice's number (its events and audit row carry it) and adds its own values. Read the answer with readNumberedOne.
 */
export function numberedInvoiceSql(
  year: number,
  row: InvoiceBulkInsert,
  lines: LineItemInsert[],
  parts: (numberSql: string, values: LiteralValues, guard?: StatementGuard) => NumberedPart[],
  guardOf?: (values: LiteralValues) => StatementGuard,
): LiteralStatement {
  const values = new LiteralValues();
  const guard = guardOf?.(values);
  const y = values.add(integerLiteral(year), 'integer');
  const text = numberedInvoicesSql(
    {
      kind: textLiteral('INV'),
      year: y,
      count: '1',
      countAgain: '1',
      yearText: y,
      rows: values.add(jsonLiteral([row]), 'text'),
      lines: values.add(jsonLiteral(lines), 'text'),
    },
    parts('(select invoice_number from inserted)', values, guard),
    { guard, single: true },
  );
  return { text, values: values.values };
}

/**
 * insertNumberedInvoices as the LAST statement of a batch's transaction (invoices/issue.ts numberInvoicesLast, sent
 * with the COMMIT by db/hot-lock.ts): values written as literals (db/literal.ts), `parts` written by the same
 * statement reading the CTE `inserted (id, invoice_number)`, and nothing answered but the count of invoices (the
 * caller built everything it needs before). `lines` may be empty when they were written before (writeLineItems).
 */
export function numberedBatchSql(
  year: number,
  rows: InvoiceBulkInsert[],
  lines: LineItemInsert[],
  parts: NumberedPart[],
  when?: string,
): string {
  const y = integerLiteral(year);
  const count = integerLiteral(rows.length);
  return numberedInvoicesSql(
    {
      kind: textLiteral('INV'),
      year: y,
      count,
      countAgain: count,
      yearText: y,
      rows: jsonLiteral(datesAsText(rows)),
      lines: jsonLiteral(lines),
    },
    parts,
    { answer: false, when },
  );
}

/**
 * The lines of invoices not yet written, whose ids the caller chose (NewInvoice.id), in one statement: written before
 * the invoices take their numbers (the sweep), their foreign key to the invoice checked at commit.
 */
export async function writeLineItems(db: Db, lines: LineItemInsert[]): Promise<void> {
  if (lines.length === 0) return;
  await db.raw(`${lineItemsInsertSql('?::jsonb')}`, [JSON.stringify(lines)]);
}

const lineItemsInsertSql = (
  lines: string,
) => `insert into invoice_line_items (invoice_id, position, description, quantity, unit_price, amount)
       select l.invoice_id, l.position, l.description, l.quantity, l.unit_price, l.amount
         from jsonb_to_recordset(${lines}) as l(invoice_id uuid, position integer, description text,
                                                quantity integer, unit_price numeric, amount numeric)`;

export type NumberedRow = InvoiceRow & { line_items: LineItemRow[] };

/** What the statement of ONE invoice (numberedInvoiceSql) answers: what the caller cannot know before it runs. */
export interface NumberedOneRow {
  invoice_number: string;
  /** As PostgreSQL normalised it (`08.25` is `8.25`): the API answers the stored text. */
  tax_rate: string;
  /** The column's default, the transaction's start. */
  updated_at: Date;
  /** The lines' ids in position order, comma-separated. */
  line_ids: string | null;
}

/**
 * The invoice and its lines as numberedInvoiceSql stored them: `row` and `lines` as sent, with the columns' defaults
 * (`storedRow`, which must name every default of the table) and what the answer says. Numeric amounts are as sent
 * (unscaled NUMERIC columns store the value given; the API formats them, formatMoney).
 */
export function readNumberedOne(
  row: InvoiceBulkInsert,
  lines: LineItemInsert[],
  answer: NumberedOneRow,
  storedRow: (row: InvoiceBulkInsert, invoiceNumber: string) => InvoiceRow,
): { invoice: InvoiceRow; lines: LineItemRow[] } {
  const ids = answer.line_ids?.split(',') ?? [];
  if (ids.length !== lines.length) throw new Error(`the statement stored ${ids.length} lines of ${lines.length}`);
  return {
    invoice: { ...storedRow(row, answer.invoice_number), tax_rate: answer.tax_rate, updated_at: answer.updated_at },
    lines: lines.map((line, i) => ({ id: ids[i]!, ...line })),
  };
}

/** The invoices of a numbering statement's answer in the order of `rows`, and each one's lines by position. */
export function readNumbered(
  rows: Pick<InvoiceBulkInsert, 'id'>[],
  answer: NumberedRow[],
): { invoices: InvoiceRow[]; lines: LineItemRow[] } {
  const byId = new Map(
    answer.map(({ line_items, ...invoice }) => [invoice.id, { invoice: invoice as InvoiceRow, lines: line_items }]),
  );
  const stored = rows.map((r) => byId.get(r.id)!);
  return { invoices: stored.map((s) => s.invoice), lines: stored.flatMap((s) => s.lines) };
}

/**
 * The numbering statement (one counter claim, the invoices, their lines, and `parts`), each value given as SQL: `?`
 * placeholders bound in the order of the keys of `v`, or literals. With a `guard` (a request's session checked in
 * the statement, db/fast-query.ts) no number is claimed unless it admits, so no invoice is written, the lines are
 * written only with their invoice, and what carries the number (the parts' events and audit row) gets none and
 * writes nothing; the answer is the guard's.
 */
function numberedInvoicesSql(
  v: { kind: string; year: string; count: string; countAgain: string; yearText: string; rows: string; lines: string },
  parts: NumberedPart[],
  options: { guard?: StatementGuard; single?: boolean; answer?: boolean; when?: string } = {},
): string {
  const { guard, single = false, answer = true, when } = options;
  const reads = parts.flatMap((p) => (p.read ? [` cross join ${p.read}`] : [])).join('');
  // `when` (a batch's: SQL that waits for its turn) is evaluated as the counter is claimed: after the statement's
  // values are parsed.
  const counter = claimNumbersCte(v.kind, v.year, v.count, v.countAgain, guard?.admits ?? when);
  const head = `with ${guard ? `${guard.ctes}, ` : ''}${counter}`;
  // Lines are written only with their invoice: under a guard that refuses, no invoice is inserted.
  const lines = `${lineItemsInsertSql(`${v.lines}::jsonb`)}${
    guard
      ? `
        where l.invoice_id in (select id from inserted)`
      : ''
  }`;
  const written = parts
    .map(
      (p) => `,
     ${p.text}`,
    )
    .join('');
  if (!answer) {
    return `${head},
     inserted as (${invoicesInsertSql(v)} returning id, invoice_number),
     line_items as (${lines})${written}
     select count(*)::int as invoices from inserted${reads}`;
  }
  const lineJson = `json_agg(json_build_object('id', l.id, 'invoice_id', l.invoice_id, 'position', l.position,
                                                 'description', l.description, 'quantity', l.quantity,
                                                 'unit_price', l.unit_price::text, 'amount', l.amount::text)
                             order by l.position)`;
  // One invoice answers only what its caller cannot know (readNumberedOne): its number, what PostgreSQL stamped or
  // normalised, and its lines' ids; four columns to parse instead of the row's ~25 and the lines' JSON (issue 20).
  // Several invoices' lines are grouped once and hash-joined: a subquery per invoice would scan every line per invoice.
  // Amounts as text, as pg answers NUMERIC columns: money never becomes a JS number.
  const finalSelect = single
    ? `select i.invoice_number, i.tax_rate, i.updated_at,
              (select string_agg(l.id::text, ',' order by l.position) from line_items l) as line_ids
       from inserted i${reads}`
    : `select i.*, coalesce(l.line_items, '[]') as line_items
       from inserted i
       left join (select l.invoice_id, ${lineJson} as line_items from line_items l group by l.invoice_id) l
         on l.invoice_id = i.id${reads}`;
  return `${head},
     inserted as (${invoicesInsertSql(v)}
       returning *
     ),
     line_items as (
       ${lines}
       returning *
     )${written}
     ${guard ? guard.answer(finalSelect) : finalSelect}`;
}

/** The insert of a numbering statement's invoices, numbered from the CTE `counter` (numberedInvoicesSql). */
function invoicesInsertSql(v: { yearText: string; rows: string }): string {
  return `       insert into invoices (id, customer_id, subscription_id, invoice_number, status, currency,
                             tax_rate, subtotal, tax_amount, total, credit_applied, due_date, issued_at, paid_at,
                             period_start, period_end, created_at)
       select v.id, v.customer_id, v.subscription_id,
              ${documentNumberSql("'INV'", `${v.yearText}::text`, 'counter.seq_before + v.n')},
              v.status, v.currency, v.tax_rate, v.subtotal, v.tax_amount, v.total, v.credit_applied, v.due_date,
              v.issued_at, v.paid_at, v.period_start, v.period_end, coalesce(v.created_at, now())
         from rows from (jsonb_to_recordset(${v.rows}::jsonb) as (
                id uuid, customer_id uuid, subscription_id uuid, status text, currency text, tax_rate numeric,
                subtotal numeric, tax_amount numeric, total numeric, credit_applied numeric,
                due_date timestamptz, issued_at timestamptz, paid_at timestamptz, period_start timestamptz,
                period_end timestamptz, created_at timestamptz))
              with ordinality as v(id, customer_id, subscription_id, status, currency, tax_rate, subtotal,
                                   tax_amount, total, credit_applied, due_date, issued_at, paid_at, period_start,
                                   period_end, created_at, n)
        cross join counter
        order by v.n`;
}

/**
 * Up to `limit` issued invoices whose due date passed by `asOf`, moved to `overdue` (D-52) and
 * answered; rows another transaction holds are skipped (it is paying or changing them), so two
 * sweeps never mark one invoice twice.
 */
export async function markOverdueInvoiceRows(db: Db, asOf: Date, limit: number): Promise<InvoiceRow[]> {
  const result = await db.raw<{ rows: InvoiceRow[] }>(
    `with due as (
       select id from invoices
        where status = 'issued' and due_date < ?
        order by due_date
        limit ?
        for update skip locked
     )
     update invoices i
        set status = 'overdue', overdue_at = ?, content_version = i.content_version + 1, updated_at = now()
       from due
      where i.id = due.id and i.status = 'issued'
     returning i.*`,
    [asOf, limit, asOf],
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
    [JSON.stringify(periods.map((p) => ({ subscription_id: p.subscriptionId, period_start: p.periodStart })))],
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
