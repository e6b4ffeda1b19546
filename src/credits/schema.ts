import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { currencyCode, DEFAULT_CURRENCY, formatMoney } from '../money.ts';
import { optionalNote, positiveMoneyString } from '../money-input.ts';
import type { LedgerEntryRow } from './ledger-repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

/** POST /api/billing/credits (D-57). */
export const createCreditBody = z
  .object({
    customerId: uuid,
    amount: positiveMoneyString,
    description: optionalNote,
    currency: currencyCode.default(DEFAULT_CURRENCY),
  })
  .meta({
    examples: [
      {
        customerId: EXAMPLE_ID.customer,
        amount: '25.00',
        currency: 'USD',
        description: 'Goodwill credit for the January outage',
      },
    ],
  });
export type CreateCreditInput = z.output<typeof createCreditBody>;

export const listCreditsQuery = pageQuery.extend({ customerId: uuid.optional(), currency: currencyCode.optional() });

export const ledgerEntryFields = {
  id: z.uuid(),
  customerId: z.uuid(),
  kind: z.enum(['credit', 'application', 'credit_note', 'proration']),
  amount: z.string(),
  currency: z.string(),
  description: z.string().nullable(),
  invoiceId: z.uuid().nullable(),
  creditNoteId: z.uuid().nullable(),
  balanceAfter: z.string(),
  createdAt: z.string(),
};

/** The ledger entry the document shows as an example (also the base of a created credit's). */
export const LEDGER_ENTRY_EXAMPLE = {
  id: 'c0e3f405-6172-4839-a04b-5c6d7e8f9001',
  customerId: EXAMPLE_ID.customer,
  kind: 'credit',
  amount: '25.00',
  currency: 'USD',
  description: 'Goodwill credit for the January outage',
  invoiceId: null,
  creditNoteId: null,
  balanceAfter: '25.00',
  createdAt: '2026-01-05T09:30:00.000Z',
};

/** A ledger entry; amounts are signed (applications are negative); balanceAfter is the balance right after it. */
export const ledgerEntryResponse = z.object(ledgerEntryFields).meta({ examples: [LEDGER_ENTRY_EXAMPLE] });

export function serialiseLedgerEntry(row: LedgerEntryRow, balanceAfter: string) {
  return {
    id: row.id,
    customerId: row.customer_id,
    kind: row.kind,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    description: row.description,
    invoiceId: row.invoice_id,
    creditNoteId: row.credit_note_id,
    balanceAfter: formatMoney(balanceAfter, row.currency),
    createdAt: iso(row.created_at)!,
  };
}
