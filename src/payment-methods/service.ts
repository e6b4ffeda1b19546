import type { Db } from '../db/knex.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import {
  clearDefaultPaymentMethod,
  deletePaymentMethodRow,
  insertPaymentMethodRow,
  listPaymentMethodRows,
  lockCustomerPaymentMethods,
  SAME_METHOD_UNIQUE,
  type PaymentMethodRow,
} from './repo.ts';
import type { CreatePaymentMethodInput } from './schema.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { inTransaction } from '../db/knex.ts';

/**
 * A stored method as the audit log records it (C-11), on its customer. The provider's method id is a
 * credential to charge the customer with: never recorded, only which method it was.
 */
function audited(row: PaymentMethodRow): Record<string, unknown> {
  return { payment_method_id: row.id, type: row.type, is_default: row.is_default };
}

/**
 * Stores a provider's payment method for a customer (D-56). A new default unsets the old one in the
 * same transaction, under a per-customer lock, so the customer has at most one default at any time.
 */
export async function createPaymentMethod(
  db: Db,
  input: CreatePaymentMethodInput,
  actor: Actor,
): Promise<PaymentMethodRow> {
  try {
    // db.transaction: a savepoint inside an Idempotency-Key request, so a refusal rolls back only this.
    return await db.transaction(async (trx) => {
      await assertCustomerExists(trx, input.customerId);
      await lockCustomerPaymentMethods(trx, input.customerId);
      if (input.isDefault) await clearDefaultPaymentMethod(trx, input.customerId);
      const created = await insertPaymentMethodRow(trx, {
        customer_id: input.customerId,
        type: input.type,
        provider_method_id: input.providerMethodId,
        is_default: input.isDefault,
      });
      await recordAudits(trx, actor, [
        {
          action: 'payment_method.create',
          targetType: 'customer',
          targetId: input.customerId,
          after: audited(created),
        },
      ]);
      return created;
    });
  } catch (error) {
    if (isUniqueViolation(error, SAME_METHOD_UNIQUE)) {
      throw new AppError('duplicate_payment_method', `This ${input.type} method is already stored for the customer`, {
        details: [{ path: 'providerMethodId', message: 'already stored for this customer' }],
      });
    }
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw customerNotFound(input.customerId);
    throw error;
  }
}

export function listPaymentMethods(db: Db, page: PageQuery, customerId: string) {
  return listPaymentMethodRows(db, page, customerId);
}

/** Removes a stored method; removing the default leaves the customer without one (none is promoted). */
export async function deletePaymentMethod(db: Db, id: string, actor: Actor): Promise<void> {
  await inTransaction(db, async (trx) => {
    const removed = await deletePaymentMethodRow(trx, id);
    if (!removed) throw notFound('Payment method');
    await recordAudits(trx, actor, [
      {
        action: 'payment_method.delete',
        targetType: 'customer',
        targetId: removed.customer_id,
        before: audited(removed),
      },
    ]);
  });
}
