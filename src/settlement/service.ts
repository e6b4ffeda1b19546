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
import { nowForCustomer } from '../customers/clock.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { endDunningIfPaid, resolveDunningOfSettledInvoices } from '../dunning/service.ts';
import { addCustomerCredit } from '../invoices/credit.ts';
import type { InvoiceStatus } from '../invoices/repo.ts';
import {
  changeInvoiceStatus,
  type Clock,
  findInvoice,
  getInvoice,
  invoiceCurrenciesOf,
  lockInvoice,
  lockOpenInvoices,
} from '../invoices/service.ts';
import { findPlans } from '../plans/service.ts';
import { planIdsOfCustomer } from '../subscriptions/service.ts';
import { AppError } from '../errors.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import { formatMoney } from '../money.ts';
import { applyProviderPayment, type ProviderPayment } from '../payments/provider-payment.ts';
import type { RecordPaymentInput } from '../payments/schema.ts';
import { recordPayment } from '../payments/service.ts';

/**
 * The time a write on this invoice runs at (TC-2): the caller's, else its customer's (a test clock's customer lives at
 * the clock's time), else the wall clock's when there is no such invoice (the write then refuses it).
 */
async function nowForInvoice(trx: Db, invoiceId: string, given?: Date): Promise<Date> {
  if (given) return given;
  const invoice = await findInvoice(trx, invoiceId);
  return invoice ? nowForCustomer(trx, invoice.customer_id) : new Date();
}

/**
 * Runs `change` at the time `nowOf` resolves and, in its transaction, ends the dunning cases it settled for the
 * customer `customerOf` names.
 */
function thenEndDunning<T>(
  db: Db,
  nowOf: (trx: Db) => Promise<Date>,
  change: (trx: Db, now: Date) => Promise<T>,
  customerOf: (result: T) => string,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const now = await nowOf(trx);
    const result = await change(trx, now);
    await resolveDunningOfSettledInvoices(trx, customerOf(result), now);
    return result;
  });
}

/** An admin records a payment on an invoice (D-54); one that pays it in full ends its dunning. */
export function receivePayment(db: Db, input: RecordPaymentInput, actor: Actor, clock: { now?: Date } = {}) {
  return inTransaction(db, async (trx) => {
    const now = await nowForInvoice(trx, input.invoiceId, clock.now);
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

/**
 * PUT status (D-52). Marking paid is a settlement, not a write-off (C-12): an invoice with an amount due gets a
 * `manual` payment of that amount, referenced `marked_paid:<number>`, with the admin's note, in the same
 * transaction; writing off is `void`.
 */
export function setInvoiceStatus(
  db: Db,
  id: string,
  to: InvoiceStatus,
  actor: Actor,
  clock: Clock = {},
  note: string | null = null,
) {
  return thenEndDunning(
    db,
    (trx) => nowForInvoice(trx, id, clock.now),
    async (trx, now) => {
      if (to === 'paid' && (await settleAmountDue(trx, id, note, actor, now))) return getInvoice(trx, id);
      return changeInvoiceStatus(trx, id, to, actor, { ...clock, now });
    },
    (detail) => detail.invoice.customer_id,
  );
}

/** Records the amount due of an open invoice as a manual payment (C-12); false when nothing is due to settle. */
async function settleAmountDue(trx: Db, id: string, note: string | null, actor: Actor, now: Date): Promise<boolean> {
  const invoice = await lockInvoice(trx, id);
  if (!invoice || (invoice.status !== 'issued' && invoice.status !== 'overdue')) return false;
  const due = amountDue(invoice);
  if (due.lte(0)) return false;
  const input = {
    invoiceId: id,
    amount: storedAmount(due, invoice.currency),
    paymentMethod: 'manual' as const,
    providerReference: `marked_paid:${invoice.invoice_number}`,
    note,
  };
  await recordPayment(trx, input, actor, { now, auditAction: 'invoice.mark_paid' });
  return true;
}

/**
 * The currencies a customer is billed in (C-14): those of their invoices and of their subscriptions' plans, sorted.
 * Store credit in another currency could never be spent.
 */
export async function customerCurrencies(db: Db, customerId: string): Promise<string[]> {
  const [invoiced, planIds] = await Promise.all([
    invoiceCurrenciesOf(db, customerId),
    planIdsOfCustomer(db, customerId),
  ]);
  const plans = await findPlans(db, planIds);
  return [...new Set([...invoiced, ...[...plans.values()].map((p) => p.currency)])].sort();
}

async function assertCustomerCurrency(db: Db, customerId: string, currency: string): Promise<void> {
  const currencies = await customerCurrencies(db, customerId);
  // A customer billed in nothing yet may hold credit for a first invoice in any currency (docs/decisions.md).
  if (currencies.length === 0 || currencies.includes(currency)) return;
  const message = `must be a currency the customer is billed in: ${currencies.join(', ')}`;
  throw new AppError('currency_mismatch', `Store credit in ${currency} could not be spent: ${message}`, {
    details: [{ path: 'currency', message }],
  });
}

/**
 * D-57: a store credit is a `credit` entry in the customer's ledger, spent at once on their open
 * (issued or overdue) invoices in that currency, oldest first; what is left stays as balance for
 * invoices issued later.
 */
export async function grantCredit(db: Db, input: CreateCreditInput, actor: Actor, clock: { now?: Date } = {}) {
  assertCurrencyPrecision(input.amount, input.currency);
  try {
    return await thenEndDunning(
      db,
      (trx) => nowForCustomer(trx, input.customerId, clock.now),
      async (trx, now) => {
        await assertCustomerExists(trx, input.customerId);
        await assertCustomerCurrency(trx, input.customerId, input.currency);
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
  return thenEndDunning(
    db,
    (trx) => nowForInvoice(trx, input.invoiceId, clock.now),
    (trx, now) => createCreditNote(trx, input, actor, { now }),
    (note) => note.customer_id,
  );
}
