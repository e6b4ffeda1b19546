import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

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

export type InvoiceInsert = Pick<InvoiceRow, 'customer_id' | 'subscription_id' | 'invoice_number' | 'status' | 'currency' | 'tax_rate' | 'subtotal' | 'tax_amount' | 'total'> &
  Partial<Pick<InvoiceRow, 'due_date' | 'period_start' | 'period_end' | 'created_at'>>;

export type InvoiceChanges = Partial<
  Pick<InvoiceRow, 'status' | 'amount_paid' | 'credit_applied' | 'credited_amount' | 'due_date' | 'issued_at' | 'paid_at' | 'voided_at' | 'overdue_at'>
>;

export async function insertInvoiceRow(db: Db, row: InvoiceInsert): Promise<InvoiceRow> {
  const [created] = await db('invoices').insert(row).returning('*');
  return created as InvoiceRow;
}

export async function insertLineItemRows(db: Db, invoiceId: string, lines: { description: string; quantity: number; unit_price: string; amount: string }[]): Promise<LineItemRow[]> {
  if (lines.length === 0) return [];
  return db('invoice_line_items').insert(lines.map((l, i) => ({ ...l, invoice_id: invoiceId, position: i + 1 }))).returning('*');
}

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
  return db('invoice_line_items').whereIn('invoice_id', invoiceIds).orderBy([{ column: 'invoice_id' }, { column: 'position' }]);
}

export async function listInvoiceRows(db: Db, page: PageQuery, filters: { status?: string; customerId?: string }): Promise<Page<InvoiceRow>> {
  const query = db('invoices').select('*');
  if (filters.status) query.where({ status: filters.status });
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  return paginate<InvoiceRow>(query, 'invoices', page);
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
