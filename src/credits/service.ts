import type { Db } from '../db/knex.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import { inTransaction } from '../db/knex.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { lockOpenInvoices } from '../invoices/service.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import { formatMoney } from '../money.ts';
import { addCustomerCredit } from './grant.ts';
import type { CreateCreditInput } from './schema.ts';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/service.ts';

/**
 * D-57: a store credit is a `credit` entry in the customer's ledger, spent at once on their open
 * (issued or overdue) invoices in that currency, oldest first; what is left stays as balance for
 * invoices issued later.
 */
export async function createCredit(db: Db, input: CreateCreditInput, actor: Actor, clock: { now?: Date } = {}) {
  const now = clock.now ?? new Date();
  assertCurrencyPrecision(input.amount, input.currency);
  try {
    return await inTransaction(db, async (trx) => {
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
      await recordAudit(trx, actor, {
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
      });
      return granted;
    });
  } catch (error) {
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw customerNotFound(input.customerId);
    throw error;
  }
}

export { listCreditLedger } from './ledger.ts';
