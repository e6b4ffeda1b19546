import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { formatMoney } from '../money.ts';
import {
  optionalReasonCode,
  positiveMoneyString,
  REASON_CODES,
  type ReasonCode,
  requiredReason,
} from '../money-input.ts';
import type { RefundRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/** POST /api/billing/refunds (D-55): amount > 0 here, naming `amount`; <= refundable against the locked payment. */
export const createRefundBody = z
  .object({
    paymentId: uuid,
    amount: positiveMoneyString,
    reason: requiredReason,
    reasonCode: optionalReasonCode,
  })
  .meta({
    examples: [
      {
        paymentId: EXAMPLE_ID.payment,
        amount: '0.50',
        reason: 'Duplicate charge for January',
        reasonCode: 'duplicate',
      },
    ],
  });
/** What the service takes: the parsed body; internal callers (tests, older paths) may give no reason or code. */
export type CreateRefundInput = Omit<z.output<typeof createRefundBody>, 'reason' | 'reasonCode'> & {
  reason: string | null;
  reasonCode?: ReasonCode | null;
};

export const listRefundsQuery = pageQuery.extend({ paymentId: uuid.optional() });

export const refundResponse = z
  .object({
    id: z.uuid(),
    paymentId: z.uuid(),
    amount: z.string(),
    currency: z.string(),
    reason: z.string().nullable(),
    reasonCode: z.enum(REASON_CODES).nullable(),
    status: z.enum(['pending', 'succeeded']),
    providerRefundId: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: 'b9d2e3f4-5061-4728-993a-4b5c6d7e8f90',
        paymentId: EXAMPLE_ID.payment,
        amount: '0.50',
        currency: 'USD',
        reason: 'Duplicate charge for January',
        reasonCode: 'duplicate',
        status: 'succeeded',
        providerRefundId: null,
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseRefund(row: RefundRow) {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    reason: row.reason,
    reasonCode: row.reason_code,
    status: row.status,
    providerRefundId: row.provider_refund_id,
    createdAt: iso(row.created_at)!,
  };
}
