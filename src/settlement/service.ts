/**
 * Everything that can leave an invoice with nothing to pay from outside the lifecycle: a payment an admin records,
 * money a provider reports, marking an invoice paid or void, a store credit spent on open invoices, a credit note.
 * Payments, invoices, credits and credit notes know nothing of dunning; each use case here runs the change and
 * then, in the same transaction, ends the dunning cases it settled (D-83: a payment by any path resolves the case).
 * Each action's audit row (C-11) is written by the domain that makes the change, in that same transaction.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { createCreditNote } from '../credit-notes/service.ts';
import type { CreateCreditNoteInput } from '../credit-notes/schema.ts';
import type { CreateCreditInput } from '../credits/schema.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { endDunningIfPaid, resolveDunningOfSettledInvoices } from '../dunning/service.ts';
import { addCustomerCredit } from '../invoices/credit.ts';
import type { InvoiceStatus } from '../invoices/repo.ts';
import { changeInvoiceStatus, type Clock, lockOpenInvoices } from '../invoices/service.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import { formatMoney } from '../money.ts';
import { applyProviderPayment, type ProviderPayment } from '../payments/provider-payment.ts';
import type { RecordPaymentInput } from '../payments/schema.ts';
import { recordPayment } from '../payments/service.ts';

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

/** An admin records a payment on an invoice (D-54); one that pays it in full ends its dunning. */
export function receivePayment(db: Db, input: RecordPaymentInput, actor: Actor, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const payment = await recordPayment(trx, input, actor, { now });
    await endDunningIfPaid(trx, payment.invoice_id, now);
    return payment;
  });
}

/** Money a provider took (D-62), in the caller's transaction; a payment that pays the invoice ends its dunning. */
export async function receiveProviderPayment(trx: Db, input: ProviderPayment) {
  const result = await applyProviderPayment(trx, input);
  if (result.outcome === 'recorded') await endDunningIfPaid(trx, input.invoiceId, input.now);
  return result;
}

export function setInvoiceStatus(db: Db, id: string, to: InvoiceStatus, actor: Actor, clock: Clock = {}) {
  const now = clock.now ?? new Date();
  return thenEndDunning(
    db,
    now,
    (trx) => changeInvoiceStatus(trx, id, to, actor, { ...clock, now }),
    (detail) => detail.invoice.customer_id,
  );
}

/**
 * D-57: a store credit is a `credit` entry in the customer's ledger, spent at once on their open
 * (issued or overdue) invoices in that currency, oldest first; what is left stays as balance for
 * invoices issued later.
 */
export async function grantCredit(db: Db, input: CreateCreditInput, actor: Actor, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  assertCurrencyPrecision(input.amount, input.currency);
  try {
    return await thenEndDunning(
      db,
      now,
      async (trx) => {
        await assertCustomerExists(trx, input.customerId);
        const open = await lockOpenInvoices(trx, input.customerId, input.currency);
        const granted = await addCustomerCredit(
          trx,
          {
            customer_id: input.customerId,
            currency: input.currency,
            amount: storedAmount(input.amount, input.currency),
            kind: 'credit',
            description: input.description,
          },
          open.map((i) => i.id),
          now,
        );
        // One row on the customer; the invoices the credit paid are named in it (C-11: one row per action).
        const { entry, applications, balanceAfter } = granted;
        await recordAudits(trx, actor, [
          {
            action: 'credit.grant',
            targetType: 'customer',
            targetId: input.customerId,
            after: {
              ledgerEntryId: entry.id,
              amount: formatMoney(entry.amount, entry.currency),
              currency: entry.currency,
              description: entry.description,
              appliedTo: applications.map((a) => ({
                invoiceId: a.invoice.id,
                invoiceNumber: a.invoice.invoice_number,
                amount: formatMoney(a.amount, entry.currency),
              })),
              balanceAfter: formatMoney(balanceAfter, entry.currency),
            },
          },
        ]);
        return granted;
      },
      () => input.customerId,
    );
  } catch (error) {
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw customerNotFound(input.customerId);
    throw error;
  }
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
