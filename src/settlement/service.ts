/**
 * Admin actions of the invoice layer that can leave an invoice with nothing to pay: marking it paid or
 * void, a store credit spent on it, a credit note. Invoices, credits and credit notes know nothing of
 * dunning; these run them and then end the dunning cases they settled, in the same transaction.
 * (Payments recorded by the payments domain end theirs where they are recorded.)
 */
import { createCreditNote } from '../credit-notes/service.ts';
import type { CreateCreditNoteInput } from '../credit-notes/schema.ts';
import { createCredit } from '../credits/service.ts';
import type { CreateCreditInput } from '../credits/schema.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { resolveDunningOfSettledInvoices } from '../dunning/service.ts';
import type { InvoiceStatus } from '../invoices/repo.ts';
import { changeInvoiceStatus, type Clock } from '../invoices/service.ts';

export async function setInvoiceStatus(db: Db, id: string, to: InvoiceStatus, clock: Clock = {}) {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const detail = await changeInvoiceStatus(trx, id, to, { ...clock, now });
    await resolveDunningOfSettledInvoices(trx, detail.invoice.customer_id, now);
    return detail;
  });
}

export async function grantCredit(db: Db, input: CreateCreditInput, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const granted = await createCredit(trx, input, { now });
    await resolveDunningOfSettledInvoices(trx, input.customerId, now);
    return granted;
  });
}

export async function issueCreditNote(db: Db, input: CreateCreditNoteInput, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const note = await createCreditNote(trx, input, { now });
    await resolveDunningOfSettledInvoices(trx, note.customer_id, now);
    return note;
  });
}
