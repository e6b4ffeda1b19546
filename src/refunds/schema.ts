import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { formatMoney } from '../money.ts';
import { optionalNote, positiveMoneyString } from '../money-input.ts';
import type { RefundRow } from './repo.ts';

/** POST /api/billing/refunds (D-55): amount > 0 here, naming `amount`; <= refundable against the locked payment. */
export const createRefundBody = z.object({
  paymentId: uuid,
  amount: positiveMoneyString,
  reason: optionalNote,
});
export type CreateRefundInput = z.output<typeof createRefundBody>;

export const listRefundsQuery = pageQuery.extend({ paymentId: uuid.optional() });

export const refundResponse = z.object({
  id: z.uuid(),
  paymentId: z.uuid(),
  amount: z.string(),
  currency: z.string(),
  reason: z.string().nullable(),
  status: z.enum(['pending', 'succeeded']),
  providerRefundId: z.string().nullable(),
  createdAt: z.string(),
});

export function serialiseRefund(row: RefundRow) {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    providerRefundId: row.provider_refund_id,
    createdAt: iso(row.created_at)!,
  };
}
