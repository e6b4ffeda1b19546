import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { applyCreditToInvoice } from '../credits/apply.ts';
import { insertLedgerEntry, lockCustomerLedger } from '../credits/ledger-repo.ts';
import { assertCustomerExists } from '../customers/service.ts';
import { resolveDunningForInvoice } from '../dunning/service.ts';
import { recordEvent } from '../events/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import { money } from '../money.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { invoiceEventData } from './events.ts';
import { nextDocumentNumber } from './numbering.ts';
import { findInvoiceRow, insertInvoiceRow, insertLineItemRows, listInvoiceRows, listLineItemRows, lockInvoiceRow, updateInvoiceRow, type InvoiceChanges, type InvoiceRow, type InvoiceStatus, type LineItemRow } from './repo.ts';
import type { CreateInvoiceInput } from './schema.ts';
import { updateAndSettle } from './settle.ts';
import { priceInvoice } from './totals.ts';
import { canTransition } from './transitions.ts';

export interface InvoiceDetail {
  invoice: InvoiceRow;
  lines: LineItemRow[];
}

export interface Clock {
  now?: Date;
  settings?: SettingOverrides;
}

/** Invoices that subscriptions raise also name their billing period (unique per subscription, D-82). */
export type NewInvoice = CreateInvoiceInput & { period?: { start: Date; end: Date } };

const DAY_MS = 86_400_000;

async function assertSubscriptionExists(db: Db, subscriptionId: string): Promise<void> {
  if (!(await db('subscriptions').where({ id: subscriptionId }).first('id'))) {
    throw new AppError('subscription_not_found', `Subscription ${subscriptionId} does not exist`, { details: [{ path: 'subscriptionId', message: 'no such subscription' }] });
  }
}

/** The due date an invoice issued at `now` gets (D-52): its own, else issue date + payment terms. */
async function dueDateFor(trx: Db, dueDate: Date | null, now: Date, settings?: SettingOverrides): Promise<Date> {
  if (dueDate) return dueDate;
  const { 'billing.payment_terms_days': terms } = await getSettings(trx, ['billing.payment_terms_days'], settings);
  return new Date(now.getTime() + terms * DAY_MS);
}

/**
 * Applies `changes` that make an invoice issued (or none, when it was created issued), then spends the
 * customer's store credit on it (D-57); a zero amount due is paid at once.
 */
async function settleIssued(trx: Db, invoice: InvoiceRow, changes: InvoiceChanges, now: Date): Promise<InvoiceRow> {
  await lockCustomerLedger(trx, invoice.customer_id);
  const settled = await updateAndSettle(trx, invoice, changes, now);
  return settled.status === 'issued' ? applyCreditToInvoice(trx, settled, now) : settled;
}

/** draft -> issued (D-52): stamps the issue date and the due date, then settles what credit covers. */
async function issue(trx: Db, invoice: InvoiceRow, now: Date, settings?: SettingOverrides): Promise<InvoiceRow> {
  return settleIssued(trx, invoice, { status: 'issued', issued_at: now, due_date: await dueDateFor(trx, invoice.due_date, now, settings) }, now);
}

/**
 * Returns store credit an invoice had spent when it is voided, so the customer keeps it. An invoice
 * with payments is not voided: the money would silently stay with us; refund or credit-note it first.
 */
async function voidInvoice(trx: Db, invoice: InvoiceRow, now: Date): Promise<InvoiceRow> {
  if (money(invoice.amount_paid).gt(0)) {
    throw new AppError('invoice_has_payments', 'An invoice with payments cannot be voided: refund the payments or issue a credit note instead');
  }
  if (money(invoice.credit_applied).gt(0)) {
    await lockCustomerLedger(trx, invoice.customer_id);
    await insertLedgerEntry(trx, {
      customer_id: invoice.customer_id,
      currency: invoice.currency,
      amount: invoice.credit_applied,
      kind: 'credit',
      description: `Returned from voided ${invoice.invoice_number}`,
      invoice_id: invoice.id,
    });
  }
  const voided = await updateInvoiceRow(trx, invoice.id, { status: 'void', voided_at: now });
  // Nothing is owed any more: a dunning case on it ends now rather than at its next retry.
  await resolveDunningForInvoice(trx, invoice.id, now);
  return voided;
}

/** D-50, D-51: numbers, prices and stores an invoice with its lines and records invoice.created, together. */
export async function createInvoice(db: Db, input: NewInvoice, clock: Clock = {}): Promise<InvoiceDetail> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    await assertCustomerExists(trx, input.customerId);
    if (input.subscriptionId) await assertSubscriptionExists(trx, input.subscriptionId);
    const taxRate = input.taxRate ?? (await getSettings(trx, ['billing.default_tax_rate'], clock.settings))['billing.default_tax_rate'];
    const totals = priceInvoice(input.lineItems, taxRate, input.currency);
    if (totals.total.isNegative()) {
      throw new AppError('invalid_request', 'The invoice total must not be negative', { details: [{ path: 'lineItems', message: 'the lines add up to a negative total' }] });
    }
    const issueNow = input.status === 'issued';
    let invoice = await insertInvoiceRow(trx, {
      customer_id: input.customerId,
      subscription_id: input.subscriptionId ?? null,
      invoice_number: await nextDocumentNumber(trx, 'INV', now),
      // Created as issued when asked, so invoice.created describes it as integrators will see it (status, due date).
      status: issueNow ? 'issued' : 'draft',
      issued_at: issueNow ? now : null,
      currency: input.currency,
      tax_rate: taxRate,
      subtotal: totals.subtotal.toString(),
      tax_amount: totals.taxAmount.toString(),
      total: totals.total.toString(),
      due_date: issueNow ? await dueDateFor(trx, input.dueDate ?? null, now, clock.settings) : (input.dueDate ?? null),
      period_start: input.period?.start ?? null,
      period_end: input.period?.end ?? null,
      created_at: now,
    });
    const lines = await insertLineItemRows(
      trx,
      invoice.id,
      totals.lines.map((l) => ({ description: l.description, quantity: l.quantity, unit_price: l.unitPrice, amount: l.amount.toString() })),
    );
    await recordEvent(trx, 'invoice.created', invoiceEventData(invoice));
    if (issueNow) invoice = await settleIssued(trx, invoice, {}, now);
    return { invoice, lines };
  });
}

export async function getInvoice(db: Db, id: string): Promise<InvoiceDetail> {
  const invoice = await findInvoiceRow(db, id);
  if (!invoice) throw notFound('Invoice');
  return { invoice, lines: await listLineItemRows(db, [id]) };
}

export async function listInvoices(db: Db, page: PageQuery, filters: { status?: string; customerId?: string }) {
  const { rows, hasMore } = await listInvoiceRows(db, page, filters);
  const lines = await listLineItemRows(db, rows.map((r) => r.id));
  return { rows: rows.map((invoice) => ({ id: invoice.id, invoice, lines: lines.filter((l) => l.invoice_id === invoice.id) })), hasMore };
}

/** PUT status (D-52): the allowed moves only, under the invoice's row lock. */
export async function changeInvoiceStatus(db: Db, id: string, to: InvoiceStatus, clock: Clock = {}): Promise<InvoiceDetail> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const invoice = await lockInvoiceRow(trx, id);
    if (!invoice) throw notFound('Invoice');
    if (!canTransition(invoice.status, to)) {
      throw new AppError('invalid_status_transition', `An invoice cannot go from ${invoice.status} to ${to}`);
    }
    let changed: InvoiceRow;
    if (to === 'issued') changed = await issue(trx, invoice, now, clock.settings);
    else if (to === 'void') changed = await voidInvoice(trx, invoice, now);
    else {
      // Marked paid by hand: payment arrived outside the service.
      changed = await updateInvoiceRow(trx, invoice.id, { status: 'paid', paid_at: now });
      await recordEvent(trx, 'invoice.paid', invoiceEventData(changed));
      await resolveDunningForInvoice(trx, changed.id, now);
    }
    return { invoice: changed, lines: await listLineItemRows(trx, [id]) };
  });
}
