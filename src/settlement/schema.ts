import { z } from 'zod';
import type { LedgerEntryRow } from '../credits/ledger.ts';
import { LEDGER_ENTRY_EXAMPLE, ledgerEntryFields, serialiseLedgerEntry } from '../credits/schema.ts';
import type { CreditApplication } from '../invoices/credit.ts';
import { formatMoney } from '../money.ts';

/** The created credit; balanceAfter is the balance once the credit was spent on open invoices. */
export const createdCreditResponse = z
  .object({
    ...ledgerEntryFields,
    applications: z.array(z.object({ invoiceId: z.uuid(), invoiceNumber: z.string(), amount: z.string() })),
  })
  .meta({ examples: [{ ...LEDGER_ENTRY_EXAMPLE, applications: [] }] });

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
