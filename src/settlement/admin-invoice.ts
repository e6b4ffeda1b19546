/**
 * POST /api/billing/invoices: an admin's invoice, which may name a subscription. The subscription must exist, be
 * the invoice's customer's and bill in the invoice's currency (an invoice of one customer filed under another's
 * subscription would show on the wrong account). invoices/ knows nothing of subscriptions, so this use case checks
 * it before it issues through invoices/, in the same transaction (issuing refuses tax rates it cannot apply, T-2).
 */
import type { Actor } from '../actor.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, fieldsRefused } from '../errors.ts';
import { createInvoice, type Clock, type InvoiceDetail, type NewInvoice } from '../invoices/service.ts';
import { findPlan } from '../plans/service.ts';
import { findSubscription } from '../subscriptions/service.ts';

export async function createAdminInvoice(
  db: Db,
  input: NewInvoice,
  actor: Actor,
  clock: Clock = {},
): Promise<InvoiceDetail> {
  return inTransaction(db, async (trx) => {
    if (input.subscriptionId) await assertInvoiceableSubscription(trx, input, input.subscriptionId);
    return createInvoice(trx, input, actor, clock);
  });
}

async function assertInvoiceableSubscription(trx: Db, input: NewInvoice, subscriptionId: string): Promise<void> {
  const sub = await findSubscription(trx, subscriptionId);
  if (!sub) {
    throw new AppError('subscription_not_found', `Subscription ${subscriptionId} does not exist`, {
      details: [{ path: 'subscriptionId', message: 'no such subscription' }],
    });
  }
  if (sub.customer_id !== input.customerId) {
    throw new AppError('invalid_request', `Subscription ${subscriptionId} belongs to another customer`, {
      details: [{ path: 'subscriptionId', message: "is another customer's subscription" }],
    });
  }
  const plan = await findPlan(trx, sub.plan_id);
  if (plan && plan.currency !== input.currency) {
    const message = `must be ${plan.currency}, the currency of the subscription's plan`;
    throw fieldsRefused([{ path: 'currency', message }]);
  }
}
