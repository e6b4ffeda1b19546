import { z } from 'zod';
import type { LedgerEntryRow } from '../credits/ledger.ts';
import { ledgerEntryFields, serialiseLedgerEntry } from '../credits/schema.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';
import type { CreditApplication } from '../invoices/credit.ts';
import { formatMoney } from '../money.ts';

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
