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
import type { Actor } from '../audit/actor.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { resolveDunningOfSettledInvoices } from '../dunning/service.ts';
import type { InvoiceStatus } from '../invoices/repo.ts';
import { changeInvoiceStatus, type Clock } from '../invoices/service.ts';

/** Runs `change` and, in its transaction, ends the dunning cases it settled for the customer `customerOf` names. */
function thenEndDunning<T>(
  db: Db,
  now: Date,
  change: (trx: Db) => Promise<T>,
  customerOf: (result: T) => string,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const result = await change(trx);
    await resolveDunningOfSettledInvoices(trx, customerOf(result), now);
    return result;
  });
}

// Each action's audit row (C-11) is written by the domain that makes the change, in this same transaction.

export function setInvoiceStatus(db: Db, id: string, to: InvoiceStatus, actor: Actor, clock: Clock = {}) {
  const now = clock.now ?? new Date();
  return thenEndDunning(
    db,
    now,
    (trx) => changeInvoiceStatus(trx, id, to, actor, { ...clock, now }),
    (detail) => detail.invoice.customer_id,
  );
}

export function grantCredit(db: Db, input: CreateCreditInput, actor: Actor, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  return thenEndDunning(
    db,
    now,
    (trx) => createCredit(trx, input, actor, { now }),
    () => input.customerId,
  );
}

export function issueCreditNote(db: Db, input: CreateCreditNoteInput, actor: Actor, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  return thenEndDunning(
    db,
    now,
    (trx) => createCreditNote(trx, input, actor, { now }),
    (note) => note.customer_id,
  );
}
