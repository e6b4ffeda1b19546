import { addLedgerEntry, spendCredit } from '../credits/ledger.ts';
import { customerNotFound } from '../customers/service.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import { REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import { type Db, inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import { recordEvents } from '../events/service.ts';
import type { PageQuery } from '../db/paginate.ts';
import { formatMoney, money } from '../money.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { invoiceEventData } from './events.ts';
import {
  createInvoices,
  dueDateAt,
  invoiceIssuedEmail,
  type Clock,
  type InvoiceDetail,
  type NewInvoice,
} from './issue.ts';
import { EMAIL_CUSTOMER_FK, queueEmails } from '../emails/outbox.ts';
import {
  filteredInvoices,
  findInvoicedPeriodRows,
  findInvoiceRow,
  INVOICE_CUSTOMER_FK,
  findInvoiceRows,
  invoiceNumberRows,
  listInvoiceRows,
  listLineItemRows,
  listOpenInvoiceRows,
  lockInvoiceRow,
  markOverdueInvoiceRows,
  openAmountRows,
  updateInvoiceRow,
  type InvoiceListFilters,
  type InvoiceRow,
  type InvoiceStatus,
  INVOICE_SORTS,
} from './repo.ts';
import { updateAndSettle } from './settle.ts';
import { loadTaxContext, priceWithTaxes, TAX_SETTINGS, type TaxedInput, type TaxedPrice } from './taxes.ts';
import { customerCurrencyRows, invoiceRowsByNumber, invoiceTotalRows } from './repo-filters.ts';
import { canTransition } from './transitions.ts';
import type { Actor } from '../actor.ts';
import { auditStatement, recordAudits } from '../audit/service.ts';
import { auditedInvoice, STATUS_ACTIONS } from './audit.ts';
import { visibleToCustomer } from './customer-view.ts';

export type { Clock, InvoiceDetail, NewInvoice };

/**
 * D-50, D-51: one invoice through the issuing path, with its events and its audit row (C-11), in one transaction.
 * The customer is checked by the foreign keys of the rows written (its email's, the invoice's), not by a read of its
 * own: the refused creation rolls back with its number.
 */
export async function createInvoice(
  db: Db,
  input: NewInvoice,
  actor: Actor,
  clock: Clock = {},
): Promise<InvoiceDetail> {
  return inTransaction(db, async (trx) => {
    const [created] = await createInvoices(trx, [input], clock).catch((error: unknown) => {
      // Refused by the key of the first row that names the customer: an issued invoice's email, else the invoice.
      const keys = [INVOICE_CUSTOMER_FK, EMAIL_CUSTOMER_FK];
      throw keys.some((key) => isForeignKeyViolation(error, key)) ? customerNotFound(input.customerId) : error;
    });
    const { invoice, lines } = created!.detail;
    const audit = {
      action: 'invoice.create',
      targetType: 'invoice',
      targetId: invoice.id,
      after: { ...auditedInvoice(invoice), line_count: lines.length },
    };
    // The year's number counter stays locked until the commit and every creation queues on it: the events and the
    // audit row are one statement, not two (docs/decisions.md, issue 32).
    await recordEvents(trx, created!.events, auditStatement(trx, actor, [audit]));
    return created!.detail;
  });
}

/** draft -> issued (D-52): stamps the issue and due dates and spends store credit on it, as creation issued would. */
async function issue(trx: Db, invoice: InvoiceRow, now: Date, settings?: SettingOverrides): Promise<InvoiceRow> {
  const { 'billing.payment_terms_days': terms } = await getSettings(trx, ['billing.payment_terms_days'], settings);
  const due = amountDue({ ...invoice, status: 'issued' });
  const [credit] = await spendCredit(trx, [
    {
      customerId: invoice.customer_id,
      currency: invoice.currency,
      due,
      invoiceId: invoice.id,
      invoiceNumber: invoice.invoice_number,
    },
  ]);
  const changes = {
    status: 'issued' as const,
    issued_at: now,
    due_date: dueDateAt(now, terms, invoice.due_date),
    credit_applied: money(invoice.credit_applied).plus(credit!).toString(),
  };
  return updateAndSettle(trx, invoice, changes, now);
}

/**
 * Returns store credit an invoice had spent when it is voided, so the customer keeps it. An invoice
 * with payments is not voided: the money would silently stay with us; refund or credit-note it first.
 */
async function voidInvoice(trx: Db, invoice: InvoiceRow, now: Date): Promise<InvoiceRow> {
  if (money(invoice.amount_paid).gt(0)) {
    throw new AppError(
      'invoice_has_payments',
      'An invoice with payments cannot be voided: refund the payments or issue a credit note instead',
    );
  }
  if (money(invoice.credit_applied).gt(0)) {
    await addLedgerEntry(trx, {
      customer_id: invoice.customer_id,
      currency: invoice.currency,
      amount: invoice.credit_applied,
      kind: 'credit',
      description: `Returned from voided ${invoice.invoice_number}`,
      invoice_id: invoice.id,
    });
  }
  return updateInvoiceRow(trx, invoice.id, { status: 'void', voided_at: now });
}

/** An invoice's prices and taxes as issuing would compute them now, without writing anything (a preview). */
export async function priceNewInvoice(db: Db, input: TaxedInput, clock: Clock = {}): Promise<TaxedPrice> {
  const settings = await getSettings(db, [...TAX_SETTINGS], clock.settings);
  return priceWithTaxes(input, await loadTaxContext(db, [input], settings));
}

export async function getInvoice(db: Db, id: string): Promise<InvoiceDetail> {
  const invoice = await findInvoiceRow(db, id);
  if (!invoice) throw notFound('Invoice');
  return { invoice, lines: await listLineItemRows(db, [id]) };
}

export type { InvoiceListFilters };

/** One invoice as its customer sees it (v1, D-15): another customer's invoice or a draft is not found. */
export async function getCustomerInvoice(db: Db, customerId: string, id: string): Promise<InvoiceDetail> {
  const invoice = await findInvoiceRow(db, id);
  if (!invoice || !visibleToCustomer(invoice, customerId)) throw notFound('Invoice');
  return { invoice, lines: await listLineItemRows(db, [id]) };
}

/** A page of the invoices a customer was sent (v1, D-15): drafts are left out. */
export function listCustomerInvoices(db: Db, page: PageQuery, customerId: string, status?: InvoiceStatus) {
  return listInvoices(db, page, { customerId, status, sentOnly: true });
}

export async function listInvoices(db: Db, page: PageQuery, filters: InvoiceListFilters) {
  const { rows, hasMore } = await listInvoiceRows(db, page, filters);
  const lines = await listLineItemRows(
    db,
    rows.map((r) => r.id),
  );
  return {
    rows: rows.map((invoice) => ({ id: invoice.id, invoice, lines: lines.filter((l) => l.invoice_id === invoice.id) })),
    hasMore,
  };
}

/** A page of invoices without their lines (the console's list and export). */
export function listInvoiceSummaries(db: Db, page: PageQuery, filters: InvoiceListFilters) {
  return listInvoiceRows(db, page, filters);
}

/** These invoices by id, in one statement. */
export async function findInvoicesByIds(db: Db, ids: string[]): Promise<Map<string, InvoiceRow>> {
  return new Map((await findInvoiceRows(db, ids)).map((r) => [r.id, r]));
}

/**
 * PUT status (D-52): the allowed moves only, under the invoice's row lock. A paid or voided invoice
 * owes nothing: the caller ends its dunning case (settlement/service.ts).
 */
export async function changeInvoiceStatus(
  db: Db,
  id: string,
  to: InvoiceStatus,
  actor: Actor,
  clock: Clock = {},
): Promise<InvoiceDetail> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const invoice = await lockInvoiceRow(trx, id);
    if (!invoice) throw notFound('Invoice');
    if (!canTransition(invoice.status, to)) {
      throw new AppError('invalid_status_transition', `An invoice cannot go from ${invoice.status} to ${to}`);
    }
    let changed: InvoiceRow;
    if (to === 'issued') {
      changed = await issue(trx, invoice, now, clock.settings);
      await queueEmails(trx, [invoiceIssuedEmail(changed.id, changed.customer_id)]);
    } else if (to === 'void') changed = await voidInvoice(trx, invoice, now);
    else {
      // Marked paid by hand: payment arrived outside the service.
      changed = await updateInvoiceRow(trx, invoice.id, { status: 'paid', paid_at: now });
      await recordEvents(trx, [{ type: 'invoice.paid', data: invoiceEventData(changed) }]);
    }
    const action = STATUS_ACTIONS[to as keyof typeof STATUS_ACTIONS];
    await recordAudits(trx, actor, [
      {
        action,
        targetType: 'invoice',
        targetId: id,
        before: auditedInvoice(invoice),
        after: auditedInvoice(changed),
      },
    ]);
    return { invoice: changed, lines: await listLineItemRows(trx, [id]) };
  });
}

/** The invoice, unlocked; undefined when there is none. */
export function findInvoice(db: Db, id: string): Promise<InvoiceRow | undefined> {
  return findInvoiceRow(db, id);
}

/** The invoice locked for the rest of the caller's transaction: every change to one invoice happens one at a time. */
export function lockInvoice(trx: Db, id: string): Promise<InvoiceRow | undefined> {
  return lockInvoiceRow(trx, id);
}

/** The customer's issued or overdue invoices in one currency with something left to pay, oldest first, locked. */
export function lockOpenInvoices(trx: Db, customerId: string, currency: string): Promise<InvoiceRow[]> {
  return listOpenInvoiceRows(trx, customerId, currency);
}

/** Up to `limit` issued invoices due before `asOf` become overdue (D-52); answers them. */
export function markOverdueInvoices(
  trx: Db,
  asOf: Date,
  limit: number,
  scope: CustomerScope = REAL_CUSTOMERS,
): Promise<InvoiceRow[]> {
  return markOverdueInvoiceRows(trx, asOf, limit, scope);
}

/** Which of these (subscription, period start) pairs already have their invoice (D-82), as periodKey strings. */
export function findInvoicedPeriods(
  db: Db,
  periods: { subscriptionId: string; periodStart: Date }[],
): Promise<Set<string>> {
  return findInvoicedPeriodRows(db, periods);
}

export { periodKey } from './repo.ts';

/** The keys the invoice list sorts by (C-15). */
export const INVOICE_SORT_KEYS: readonly string[] = Object.keys(INVOICE_SORTS);

/** An amount in its currency, formatted to the currency's minor units. */
export interface CurrencyAmount {
  currency: string;
  amount: string;
}

/** What each customer still owes on issued and overdue invoices, per currency; a customer owing nothing gets []. */
export async function openAmountsOfCustomers(db: Db, customerIds: string[]): Promise<Map<string, CurrencyAmount[]>> {
  const owed = new Map<string, CurrencyAmount[]>(customerIds.map((id) => [id, []]));
  for (const row of await openAmountRows(db, customerIds))
    owed.get(row.customer_id)?.push({ currency: row.currency, amount: formatMoney(row.amount, row.currency) });
  return owed;
}

/** Invoice numbers by id, for lists that name the invoice of each row. */
export async function invoiceNumbers(db: Db, ids: string[]): Promise<Map<string, string>> {
  const rows = await invoiceNumberRows(db, [...new Set(ids)]);
  return new Map(rows.map((r) => [r.id, r.invoice_number]));
}

/** The currencies the customer has invoices in (C-14: where store credit can be spent). */
export function invoiceCurrenciesOf(db: Db, customerId: string): Promise<string[]> {
  return customerCurrencyRows(db, customerId);
}

/** Invoices found by the beginning of their number (the console's search, C-15). */
export function findInvoicesByNumber(db: Db, prefix: string, limit = 20): Promise<InvoiceRow[]> {
  return invoiceRowsByNumber(db, prefix, limit);
}

/**
 * How many invoices a list's filters keep and what they add up to, per currency (C-15); undefined when more than
 * `cap` match (db/capped.ts: a list's figures never read the whole book).
 */
export async function invoiceTotals(db: Db, filters: InvoiceListFilters, cap: number) {
  const rows = await invoiceTotalRows(db, filteredInvoices(db, filters), cap);
  return rows?.map((r) => ({
    currency: r.currency,
    count: Number(r.count),
    total: formatMoney(r.total, r.currency),
    amountDue: formatMoney(r.due, r.currency),
  }));
}
