import { z } from 'zod';
import { iso, pageQuery, uuid } from '../http/schemas.ts';
import { currencyCode, DEFAULT_CURRENCY, formatMoney } from '../money.ts';
import { optionalNote, positiveMoneyString } from '../money-input.ts';
import type { CreditApplication } from './grant.ts';
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

const ledgerEntryFields = {
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

/** A ledger entry; amounts are signed (applications are negative); balanceAfter is the balance right after it. */
export const ledgerEntryResponse = z.object(ledgerEntryFields).meta({
  examples: [
    {
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
    },
  ],
});

/** The created credit; balanceAfter is the balance once the credit was spent on open invoices. */
export const createdCreditResponse = z
  .object({
    ...ledgerEntryFields,
    applications: z.array(z.object({ invoiceId: z.uuid(), invoiceNumber: z.string(), amount: z.string() })),
  })
  .meta({
    examples: [
      {
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
        applications: [],
      },
    ],
  });

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

export function serialiseCreatedCredit(result: {
  entry: LedgerEntryRow;
  applications: CreditApplication[];
  balanceAfter: string;
}) {
  return {
    ...serialiseLedgerEntry(result.entry, result.balanceAfter),
    applications: result.applications.map((a) => ({
      invoiceId: a.invoice.id,
      invoiceNumber: a.invoice.invoice_number,
      amount: formatMoney(a.amount, a.invoice.currency),
    })),
  };
}
