import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { formatMoney, money } from '../money.ts';
import { taxEntryResponse } from '../invoices/schema.ts';
import {
  optionalReasonCode,
  positiveMoneyString,
  REASON_CODES,
  type ReasonCode,
  requiredReason,
} from '../money-input.ts';
import type { CreditNoteRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/** POST /api/billing/credit-notes (D-58). */
export const createCreditNoteBody = z
  .object({
    invoiceId: uuid,
    amount: positiveMoneyString,
    reason: requiredReason,
    reasonCode: optionalReasonCode,
  })
  .meta({
    examples: [
      {
        invoiceId: EXAMPLE_ID.invoice,
        amount: '5.00',
        reason: 'Two days of degraded service',
        reasonCode: 'service_issue',
      },
    ],
  });
/** What the service takes: the parsed body; internal callers (tests, older paths) may give no reason or code. */
export type CreateCreditNoteInput = Omit<z.output<typeof createCreditNoteBody>, 'reason' | 'reasonCode'> & {
  reason: string | null;
  reasonCode?: ReasonCode | null;
};

export const listCreditNotesQuery = pageQuery.extend({ invoiceId: uuid.optional(), customerId: uuid.optional() });

export const creditNoteResponse = z
  .object({
    id: z.uuid(),
    number: z.string().describe('CN-{YEAR}-{SEQ}; TCN-{YEAR}-{SEQ} for a test clock customer'),
    invoiceId: z.uuid(),
    customerId: z.uuid(),
    amount: z.string(),
    currency: z.string(),
    reason: z.string().nullable(),
    reasonCode: z.enum(REASON_CODES).nullable(),
    creditedToInvoice: z.string().describe('the part that lowered the amount due'),
    creditedToBalance: z.string().describe("the part added to the customer's store credit"),
    taxes: z.array(taxEntryResponse).describe("T-6: its share of the invoice's taxes"),
    createdAt: z.string(),
  })
  .meta({
    examples: [
      {
        id: 'd1f40516-7283-494a-b15c-6d7e8f900112',
        number: 'CN-2026-000007',
        invoiceId: EXAMPLE_ID.invoice,
        customerId: EXAMPLE_ID.customer,
        amount: '5.00',
        currency: 'USD',
        reason: 'Two days of degraded service',
        reasonCode: 'service_issue',
        creditedToInvoice: '5.00',
        creditedToBalance: '0.00',
        taxes: [
          {
            taxRateId: null,
            name: 'Tax',
            percentage: '8.25',
            inclusive: false,
            taxableAmount: '4.62',
            amount: '0.38',
          },
        ],
        createdAt: '2026-01-05T09:30:00.000Z',
      },
    ],
  });

export function serialiseCreditNote(row: CreditNoteRow) {
  const m = (v: string | ReturnType<typeof money>) => formatMoney(v, row.currency);
  return {
    id: row.id,
    number: row.number,
    invoiceId: row.invoice_id,
    customerId: row.customer_id,
    amount: m(row.amount),
    currency: row.currency,
    reason: row.reason,
    reasonCode: row.reason_code,
    creditedToInvoice: m(money(row.amount).minus(row.to_balance)),
    creditedToBalance: m(row.to_balance),
    taxes: row.taxes,
    createdAt: iso(row.created_at)!,
  };
}
