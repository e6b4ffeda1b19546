import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { formatMoney, money } from '../money.ts';
import { optionalNote, positiveMoneyString } from '../money-input.ts';
import type { CreditNoteRow } from './repo.ts';

/** POST /api/billing/credit-notes (D-58). */
export const createCreditNoteBody = z.object({
  invoiceId: uuid,
  amount: positiveMoneyString,
  reason: optionalNote,
});
export type CreateCreditNoteInput = z.output<typeof createCreditNoteBody>;

export const listCreditNotesQuery = pageQuery.extend({ invoiceId: uuid.optional(), customerId: uuid.optional() });

export const creditNoteResponse = z.object({
  id: z.uuid(),
  number: z.string().describe('CN-{YEAR}-{SEQ}'),
  invoiceId: z.uuid(),
  customerId: z.uuid(),
  amount: z.string(),
  currency: z.string(),
  reason: z.string().nullable(),
  creditedToInvoice: z.string().describe('the part that lowered the amount due'),
  creditedToBalance: z.string().describe("the part added to the customer's store credit"),
  createdAt: z.string(),
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
    creditedToInvoice: m(money(row.amount).minus(row.to_balance)),
    creditedToBalance: m(row.to_balance),
    createdAt: iso(row.created_at)!,
  };
}
