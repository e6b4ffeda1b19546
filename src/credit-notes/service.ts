import { queueEmails } from '../emails/outbox.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { addCustomerCredit } from '../invoices/credit.ts';
import { AppError } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { customerClockIds } from '../db/clock-scope.ts';
import { type DocumentKind, nextDocumentNumber } from '../invoices/numbering.ts';
import { findInvoice, lockInvoice, lockOpenInvoices } from '../invoices/service.ts';
import { updateAndSettle } from '../invoices/settle.ts';
import { creditedTaxes } from '../invoices/taxes.ts';
import { formatMoney, money, Money } from '../money.ts';
import { assertCurrencyPrecision, storedAmount } from '../money-input.ts';
import {
  creditNoteTotal,
  findCreditNoteRow,
  insertCreditNoteRow,
  listCreditNoteRows,
  type CreditNoteRow,
} from './repo.ts';
import type { CreateCreditNoteInput } from './schema.ts';
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { auditedInvoice } from '../invoices/audit.ts';

/**
 * A test clock's customer's credit notes are numbered `TCN-{YEAR}-{SEQ}`, apart from the real `CN` sequence, as its
 * invoices are `TST` (issue 39): deleting the clock deletes them without leaving a gap in the real numbers (D-58).
 */
async function creditNoteKind(trx: Db, customerId: string): Promise<DocumentKind> {
  return (await customerClockIds(trx, [customerId])).size > 0 ? 'TCN' : 'CN';
}

/**
 * D-58: a credit note `CN-{YEAR}-{SEQ}` takes money off an issued, overdue or paid invoice; all of an
 * invoice's notes together stay within its total. On an unpaid invoice it lowers the amount due
 * (credited_amount; nothing left makes it `paid`); the part beyond what is still due (a partly paid
 * invoice) and a note on a paid invoice go to the customer's store credit as a `credit_note` ledger
 * entry, which like any credit is spent on the customer's other open invoices, oldest first.
 */
export async function createCreditNote(
  db: Db,
  input: CreateCreditNoteInput,
  actor: Actor,
  clock: { now?: Date } = {},
): Promise<CreditNoteRow> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const found = await findInvoice(trx, input.invoiceId);
    if (!found) {
      throw new AppError('invoice_not_found', `Invoice ${input.invoiceId} does not exist`, {
        details: [{ path: 'invoiceId', message: 'no such invoice' }],
      });
    }
    // Lock order of ledger-repo.ts: the customer's open invoices (which may include this one), this one, then the
    // ledger.
    const open = await lockOpenInvoices(trx, found.customer_id, found.currency);
    const invoice = (await lockInvoice(trx, found.id))!;
    if (invoice.status === 'draft' || invoice.status === 'void') {
      throw new AppError('invoice_not_creditable', `A ${invoice.status} invoice cannot be credited`);
    }
    assertCurrencyPrecision(input.amount, invoice.currency);
    const amount = money(input.amount);
    const creditable = money(invoice.total).minus(await creditNoteTotal(trx, invoice.id));
    if (amount.gt(creditable)) {
      const message =
        `must be at most what the invoice's credit notes have left of its total, ` +
        `${formatMoney(creditable, invoice.currency)} ${invoice.currency}`;
      throw new AppError('amount_exceeds_invoice', `The amount ${message}`, { details: [{ path: 'amount', message }] });
    }
    const note = await insertCreditNoteRow(trx, {
      number: await nextDocumentNumber(trx, await creditNoteKind(trx, invoice.customer_id), now),
      invoice_id: invoice.id,
      customer_id: invoice.customer_id,
      amount: storedAmount(input.amount, invoice.currency),
      currency: invoice.currency,
      reason: input.reason,
      taxes: creditedTaxes(invoice, input.amount),
      reason_code: input.reasonCode ?? null,
      created_at: now,
    });
    await queueEmails(trx, [
      {
        type: 'credit_note.issued',
        customerId: note.customer_id,
        occasion: note.id,
        data: {
          creditNoteId: note.id,
          creditNoteNumber: note.number,
          invoiceId: note.invoice_id,
          amount: note.amount,
          currency: note.currency,
          reason: note.reason,
        },
      },
    ]);
    let toBalance = amount;
    let after = invoice;
    if (invoice.status === 'issued' || invoice.status === 'overdue') {
      const toInvoice = Money.min(amount, amountDue(invoice));
      toBalance = amount.minus(toInvoice);
      if (toInvoice.gt(0))
        after = await updateAndSettle(
          trx,
          invoice,
          { credited_amount: storedAmount(money(invoice.credited_amount).plus(toInvoice), invoice.currency) },
          now,
        );
    }
    if (toBalance.gt(0)) {
      await addCustomerCredit(
        trx,
        {
          customer_id: invoice.customer_id,
          currency: invoice.currency,
          amount: storedAmount(toBalance, invoice.currency),
          kind: 'credit_note',
          description: `Credit note ${note.number} on ${invoice.invoice_number}`,
          invoice_id: invoice.id,
          credit_note_id: note.id,
        },
        open.map((i) => i.id).filter((id) => id !== invoice.id),
        now,
      );
    }
    await recordAudits(trx, actor, [
      {
        action: 'credit_note.create',
        targetType: 'invoice',
        targetId: invoice.id,
        before: auditedInvoice(invoice),
        after: {
          ...auditedInvoice(after),
          creditNoteId: note.id,
          creditNoteNumber: note.number,
          amount: formatMoney(note.amount, invoice.currency),
          reason: note.reason,
          reasonCode: note.reason_code,
          toStoreCredit: storedAmount(toBalance, invoice.currency),
        },
      },
    ]);
    return (await findCreditNoteRow(trx, note.id))!;
  });
}

export function listCreditNotes(db: Db, page: PageQuery, filters: { invoiceId?: string; customerId?: string }) {
  return listCreditNoteRows(db, page, filters);
}
