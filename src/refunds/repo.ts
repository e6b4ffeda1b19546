import type { Db } from '../db/knex.ts';
import { paginate, type Page } from '../db/paginate.ts';
import type { PageQuery } from '../http/schemas.ts';

/** `pending`: reserved while the provider is asked; `succeeded`: refunded. */
export type RefundStatus = 'pending' | 'succeeded';

export interface RefundRow {
  id: string;
  payment_id: string;
  amount: string;
  reason: string | null;
  status: RefundStatus;
  provider_refund_id: string | null;
  created_at: Date;
  /** The payment's currency (refunds carry none of their own). */
  currency: string;
}

type StoredRefund = Omit<RefundRow, 'currency'>;

const withCurrency = (row: StoredRefund, currency: string): RefundRow => ({ ...row, currency });

export async function insertRefundRow(
  db: Db,
  row: Pick<StoredRefund, 'id' | 'payment_id' | 'amount' | 'reason' | 'status'> & { created_at: Date },
  currency: string,
): Promise<RefundRow> {
  const [created] = await db('refunds').insert(row).returning('*');
  return withCurrency(created as StoredRefund, currency);
}

export async function findRefundRow(db: Db, id: string): Promise<RefundRow | undefined> {
  return db('refunds').join('payments', 'payments.id', 'refunds.payment_id').where('refunds.id', id).first('refunds.*', 'payments.currency');
}

/** What reservations of a payment hold back: refunds still waiting for their provider. */
export async function pendingRefundTotal(db: Db, paymentId: string): Promise<string> {
  const row = await db('refunds').where({ payment_id: paymentId, status: 'pending' }).sum<{ total: string | null }>('amount as total').first();
  return row?.total ?? '0';
}

/** Marks a reservation refunded; undefined when it is no longer pending (completed or released elsewhere). */
export async function completeRefundRow(db: Db, id: string, providerRefundId: string, currency: string): Promise<RefundRow | undefined> {
  const [row] = await db('refunds').where({ id, status: 'pending' }).update({ status: 'succeeded', provider_refund_id: providerRefundId }).returning('*');
  return row ? withCurrency(row as StoredRefund, currency) : undefined;
}

/** Drops a reservation the provider refused: a failed refund leaves no record (D-55). */
export async function deletePendingRefundRow(db: Db, id: string): Promise<void> {
  await db('refunds').where({ id, status: 'pending' }).delete();
}

/** Reservations older than `before`, oldest first: left behind by a process that stopped mid-refund. */
export async function listStalePendingRefundIds(db: Db, before: Date, limit: number): Promise<string[]> {
  const rows = await db('refunds').where({ status: 'pending' }).where('created_at', '<', before).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit).select('id');
  return rows.map((r: { id: string }) => r.id);
}

export function listRefundRows(db: Db, page: PageQuery, filters: { paymentId?: string }): Promise<Page<RefundRow>> {
  const query = db('refunds').join('payments', 'payments.id', 'refunds.payment_id').select('refunds.*', 'payments.currency');
  if (filters.paymentId) query.where('refunds.payment_id', filters.paymentId);
  return paginate<RefundRow>(query, 'refunds', page);
}

/** The refunds of these payments, oldest first, in one statement. */
export async function listRefundRowsOfPayments(db: Db, paymentIds: string[]): Promise<RefundRow[]> {
  if (paymentIds.length === 0) return [];
  return db('refunds')
    .join('payments', 'payments.id', 'refunds.payment_id')
    .whereIn('refunds.payment_id', [...new Set(paymentIds)])
    .orderBy([{ column: 'refunds.created_at' }, { column: 'refunds.id' }])
    .select('refunds.*', 'payments.currency');
}
