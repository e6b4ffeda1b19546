import type { Db } from '../db/knex.ts';
import { paginate, type Page, type PageQuery } from '../db/paginate.ts';

export interface PaymentMethodRow {
  id: string;
  customer_id: string;
  type: string;
  provider_method_id: string;
  is_default: boolean;
  created_at: Date;
}

/** The table's unique (customer_id, type, provider_method_id) (migration 20261122000300). */
export const SAME_METHOD_UNIQUE = 'payment_methods_customer_id_type_provider_method_id_key';

/**
 * Orders changes to one customer's set of methods, so "unset the old default, set the new one" of
 * two requests cannot interleave (the partial unique index payment_methods_one_default would refuse
 * the loser with an error instead of letting it win in turn).
 */
export async function lockCustomerPaymentMethods(db: Db, customerId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', ['payment_methods', customerId]);
}

export async function clearDefaultPaymentMethod(db: Db, customerId: string): Promise<void> {
  await db('payment_methods').where({ customer_id: customerId, is_default: true }).update({ is_default: false });
}

export async function insertPaymentMethodRow(
  db: Db,
  row: Pick<PaymentMethodRow, 'customer_id' | 'type' | 'provider_method_id' | 'is_default'>,
): Promise<PaymentMethodRow> {
  const [created] = await db('payment_methods').insert(row).returning('*');
  return created as PaymentMethodRow;
}

/** The removed row; undefined when there is no such method. */
export async function deletePaymentMethodRow(db: Db, id: string): Promise<PaymentMethodRow | undefined> {
  const [removed] = await db('payment_methods').where({ id }).delete().returning('*');
  return removed as PaymentMethodRow | undefined;
}

export function listPaymentMethodRows(db: Db, page: PageQuery, customerId: string): Promise<Page<PaymentMethodRow>> {
  return paginate<PaymentMethodRow>(
    db('payment_methods').select('*').where({ customer_id: customerId }),
    'payment_methods',
    page,
  );
}

/** The customer's default method, for auto-charge (D-83). */
export async function findDefaultPaymentMethodRow(db: Db, customerId: string): Promise<PaymentMethodRow | undefined> {
  return db('payment_methods').where({ customer_id: customerId, is_default: true }).first();
}
