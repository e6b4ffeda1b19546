import { firstRowsOf, overCap } from '../db/capped.ts';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery, type SortColumns } from '../db/paginate.ts';

export const PAYMENT_METHODS = ['provider_a', 'provider_b', 'provider_c', 'bank_transfer', 'manual'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
export type PaymentStatus = 'succeeded' | 'partially_refunded' | 'refunded';

export interface PaymentRow {
  id: string;
  invoice_id: string;
  customer_id: string;
  amount: string;
  currency: string;
  payment_method: PaymentMethod;
  provider_reference: string | null;
  status: PaymentStatus;
  refunded_amount: string;
  /** When the money arrived (C-13): what lists, exports and collected figures count by. */
  received_at: Date;
  note: string | null;
  created_at: Date;
}

/** The partial unique index on (payment_method, provider_reference) (migration 20261122000300). */
export const PROVIDER_REFERENCE_UNIQUE = 'payments_provider_reference';

export async function insertPaymentRow(
  db: Db,
  row: Pick<
    PaymentRow,
    'invoice_id' | 'customer_id' | 'amount' | 'currency' | 'payment_method' | 'provider_reference'
  > & { created_at?: Date; received_at?: Date; note?: string | null },
): Promise<PaymentRow> {
  const [created] = await db('payments').insert(row).returning('*');
  return created as PaymentRow;
}

export async function findPaymentRow(db: Db, id: string): Promise<PaymentRow | undefined> {
  return db('payments').where({ id }).first();
}

/** The payment locked for the rest of the transaction: refunds of one payment happen one at a time. */
export async function lockPaymentRow(db: Db, id: string): Promise<PaymentRow | undefined> {
  return db('payments').where({ id }).forUpdate().first();
}

export async function findPaymentByReference(
  db: Db,
  paymentMethod: string,
  providerReference: string,
): Promise<PaymentRow | undefined> {
  return db('payments').where({ payment_method: paymentMethod, provider_reference: providerReference }).first();
}

export async function updatePaymentRefunds(
  db: Db,
  id: string,
  changes: Pick<PaymentRow, 'refunded_amount' | 'status'>,
): Promise<PaymentRow> {
  const [row] = await db('payments').where({ id }).update(changes).returning('*');
  return row as PaymentRow;
}

/** What a list of payments may be narrowed by, on the day received (C-13); `createdBefore` is exclusive. */
export interface PaymentListFilters {
  invoiceId?: string;
  customerId?: string;
  status?: PaymentStatus;
  createdFrom?: Date;
  createdBefore?: Date;
}

/** The columns the console's payment list sorts by (C-15). */
export const PAYMENT_SORTS: SortColumns = {
  receivedAt: 'received_at',
  method: 'payment_method',
  reference: "coalesce(provider_reference, '')",
  amount: 'amount',
  refunded: 'refunded_amount',
  status: 'status',
  createdAt: 'created_at',
};

export function listPaymentRows(db: Db, page: PageQuery, filters: PaymentListFilters): Promise<Page<PaymentRow>> {
  return paginate<PaymentRow>(filteredPayments(db, filters).select('*'), 'payments', page, PAYMENT_SORTS);
}

function filteredPayments(db: Db, filters: PaymentListFilters) {
  const query = db('payments');
  if (filters.invoiceId) query.where({ invoice_id: filters.invoiceId });
  if (filters.customerId) query.where({ customer_id: filters.customerId });
  if (filters.status) query.where({ status: filters.status });
  if (filters.createdFrom) query.where('received_at', '>=', filters.createdFrom);
  if (filters.createdBefore) query.where('received_at', '<', filters.createdBefore);
  return query;
}

/**
 * Count, amount and refunded per currency of the payments a list's filters keep (C-15); undefined when more than
 * `cap` match (db/capped.ts).
 */
export async function paymentTotalRows(db: Db, filters: PaymentListFilters, cap: number) {
  const rows: { currency: string; count: string; amount: string; refunded: string }[] = await firstRowsOf(
    db,
    filteredPayments(db, filters),
    ['currency', 'amount', 'refunded_amount'],
    cap,
  )
    .select('currency', db.raw('count(*)::text as count'))
    .select(db.raw('sum(amount)::text as amount'), db.raw('sum(refunded_amount)::text as refunded'))
    .groupBy('currency')
    .orderBy('currency');
  return overCap(rows, cap) ? undefined : rows;
}

/** The newest payment of the invoice like this one (same amount, method, no reference, day received) since `since`. */
export function findLikePaymentRow(
  db: Db,
  like: { invoiceId: string; amount: string; paymentMethod: string; receivedAt: Date },
  since: Date,
): Promise<PaymentRow | undefined> {
  const day = like.receivedAt.toISOString().slice(0, 10);
  return db('payments')
    .where({ invoice_id: like.invoiceId, payment_method: like.paymentMethod, provider_reference: null })
    .where('amount', like.amount)
    .whereRaw("(received_at at time zone 'UTC')::date = ?::date", [day])
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .first();
}

/** Payments whose provider reference starts with `prefix` (case-insensitive), newest first (C-15). */
export function paymentRowsByReference(db: Db, prefix: string, limit: number): Promise<PaymentRow[]> {
  const escaped = prefix.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return db('payments')
    .whereNotNull('provider_reference')
    .whereRaw('lower(provider_reference) like ?', [`${escaped}%`])
    .orderBy('created_at', 'desc')
    .limit(limit)
    .select('*');
}
