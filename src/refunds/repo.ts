import type { ReasonCode } from '../money-input.ts';
import type { Knex } from 'knex';
import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

/**
 * `pending`: reserved while the provider is asked, or after it answered nothing we can trust; `succeeded`: refunded.
 */
export type RefundStatus = 'pending' | 'succeeded';

export interface RefundRow {
  id: string;
  payment_id: string;
  amount: string;
  reason: string | null;
  reason_code: ReasonCode | null;
  status: RefundStatus;
  provider_refund_id: string | null;
  /** While the provider is being asked for this pending refund; null or past: nobody is asking it now. */
  call_lease_until: Date | null;
  created_at: Date;
  /** The payment's currency (refunds carry none of their own). */
  currency: string;
}

type StoredRefund = Omit<RefundRow, 'currency'>;

const withCurrency = (row: StoredRefund, currency: string): RefundRow => ({ ...row, currency });

export async function insertRefundRow(
  db: Db,
  row: Pick<StoredRefund, 'id' | 'payment_id' | 'amount' | 'reason' | 'reason_code' | 'status' | 'call_lease_until'> & {
    created_at: Date;
  },
  currency: string,
): Promise<RefundRow> {
  const [created] = await db('refunds').insert(row).returning('*');
  return withCurrency(created as StoredRefund, currency);
}

export async function findRefundRow(db: Db, id: string): Promise<RefundRow | undefined> {
  return db('refunds')
    .join('payments', 'payments.id', 'refunds.payment_id')
    .where('refunds.id', id)
    .first('refunds.*', 'payments.currency');
}

/** What reservations of a payment hold back: refunds still waiting for their provider. */
export async function pendingRefundTotal(db: Db, paymentId: string): Promise<string> {
  const row = await db('refunds')
    .where({ payment_id: paymentId, status: 'pending' })
    .sum<{ total: string | null }>('amount as total')
    .first();
  return row?.total ?? '0';
}

/** Marks a reservation refunded; undefined when it is no longer pending (completed or released elsewhere). */
export async function completeRefundRow(
  db: Db,
  id: string,
  providerRefundId: string,
  currency: string,
): Promise<RefundRow | undefined> {
  const [row] = await db('refunds')
    .where({ id, status: 'pending' })
    .update({ status: 'succeeded', provider_refund_id: providerRefundId, call_lease_until: null })
    .returning('*');
  return row ? withCurrency(row as StoredRefund, currency) : undefined;
}

/** Pending, and nobody asking the provider for it now: its lease is cleared or past. */
const unleased = (query: Knex.QueryBuilder, now: Date) =>
  query.where((q) => q.whereNull('call_lease_until').orWhere('call_lease_until', '<', now));

/**
 * The oldest pending refund of this payment and amount that nobody is asking the provider for now: one whose
 * call ended without a known outcome, or whose process stopped. Read under the payment's lock.
 */
export async function findUnleasedPendingRefund(
  db: Db,
  paymentId: string,
  amount: string,
  now: Date,
): Promise<StoredRefund | undefined> {
  return unleased(db('refunds').where({ payment_id: paymentId, status: 'pending', amount }), now)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .first();
}

/**
 * Whether a pending refund of this payment and amount made before `createdBefore` is being asked for again right
 * now (leased): a retry of it, by an admin or by the sweep, is running.
 */
export async function pendingRefundAskedAgain(
  db: Db,
  paymentId: string,
  amount: string,
  now: Date,
  createdBefore: Date,
): Promise<boolean> {
  const row = await db('refunds')
    .where({ payment_id: paymentId, status: 'pending', amount })
    .where('call_lease_until', '>=', now)
    .where('created_at', '<', createdBefore)
    .first('id');
  return Boolean(row);
}

/** Takes the lease of a pending refund nobody is asking for; undefined when someone holds it or it is settled. */
export async function leaseRefundRow(
  db: Db,
  id: string,
  until: Date,
  now: Date,
  currency: string,
): Promise<RefundRow | undefined> {
  const [row] = await unleased(db('refunds').where({ id, status: 'pending' }), now)
    .update({ call_lease_until: until })
    .returning('*');
  return row ? withCurrency(row as StoredRefund, currency) : undefined;
}

/** Ends the lease of a call whose outcome is unknown: the reservation stays, free for the next ask. */
export async function releaseRefundLease(db: Db, id: string): Promise<void> {
  await db('refunds').where({ id, status: 'pending' }).update({ call_lease_until: null });
}

/** Drops a reservation the provider refused: a failed refund leaves no record (D-55). */
export async function deletePendingRefundRow(db: Db, id: string): Promise<void> {
  await db('refunds').where({ id, status: 'pending' }).delete();
}

/**
 * Reservations made before `before` that nobody is asking the provider for now, oldest first: left behind by
 * a process that stopped mid-refund, or by a call whose outcome is unknown and that nobody asked for again.
 */
export async function listStalePendingRefundIds(db: Db, before: Date, now: Date, limit: number): Promise<string[]> {
  const rows = await unleased(db('refunds').where({ status: 'pending' }).where('created_at', '<', before), now)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit)
    .select('id');
  return rows.map((r: { id: string }) => r.id);
}

/** A refund in a list: with its payment's invoice, customer and method (C-17: one row per refund). */
export type RefundListRow = RefundRow & { invoice_id: string; customer_id: string; payment_method: string };

export interface RefundListFilters {
  paymentId?: string;
  customerId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
}

export function listRefundRows(db: Db, page: PageQuery, filters: RefundListFilters): Promise<Page<RefundListRow>> {
  const query = db('refunds')
    .join('payments', 'payments.id', 'refunds.payment_id')
    .select('refunds.*', 'payments.currency', 'payments.invoice_id', 'payments.customer_id', 'payments.payment_method');
  if (filters.paymentId) query.where('refunds.payment_id', filters.paymentId);
  if (filters.customerId) query.where('payments.customer_id', filters.customerId);
  if (filters.createdFrom) query.where('refunds.created_at', '>=', filters.createdFrom);
  if (filters.createdBefore) query.where('refunds.created_at', '<', filters.createdBefore);
  return paginate<RefundListRow>(query, 'refunds', page);
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
