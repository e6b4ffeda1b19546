/**
 * The one path by which invoices come to exist (D-50..D-52, D-57): new invoices, one or many, priced, numbered by
 * the year's counter in the statement that stores them, and, when issued, given their due date and paid from the
 * customers' store credit. The admin route, subscription creation, period and proration invoices, plan changes,
 * resumes and the sweep's batches all issue through createInvoices.
 */
import { newUuid } from '../crypto/ids.ts';
import { queueEmails } from '../emails/outbox.ts';
import { planCreditSpend, recordCreditSpend, type CreditSpend } from '../credits/ledger.ts';
import { customerClockTimes } from '../customers/clock.ts';
import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import type { NewEvent } from '../events/service.ts';
import { money } from '../money.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { invoiceEventData } from './events.ts';
import {
  insertLineItems,
  insertNumberedInvoices,
  type InvoiceBulkInsert,
  type InvoiceRow,
  type LineItemInsert,
  type LineItemRow,
} from './repo.ts';
import type { LineInput } from '../pricing/lines.ts';
import { loadTaxContext, priceWithTaxes, storedTaxes, TAX_SETTINGS, type TaxedPrice } from './taxes.ts';

export interface Clock {
  now?: Date;
  settings?: SettingOverrides;
}

export interface InvoiceDetail {
  invoice: InvoiceRow;
  lines: LineItemRow[];
}

export interface NewInvoice {
  /** A new id the caller chose (the sweep's audit rows name the invoice before it is issued); else one is made. */
  id?: string;
  customerId: string;
  subscriptionId?: string | null;
  currency: string;
  lineItems: LineInput[];
  /** Percent (D-51); when absent, the named rates of T-2, else the `billing.default_tax_rate` setting. */
  taxRate?: string;
  /** T-2: the rates the caller names (refused when unknown or archived); a line's own list wins. */
  taxRateIds?: string[];
  /** T-2: a subscription's plan's rates (archived ones apply to nothing). */
  planTaxRateIds?: string[];
  /** Issued invoices without one are due after `billing.payment_terms_days`. */
  dueDate?: Date | null;
  status: 'draft' | 'issued';
  /** The billing period a subscription's invoice covers (unique per subscription, D-82). */
  period?: { start: Date; end: Date };
}

export interface CreatedInvoice {
  detail: InvoiceDetail;
  /** invoice.created as of creation, then invoice.paid when store credit (or a zero total) settled it. */
  events: NewEvent[];
}

const DAY_MS = 86_400_000;

/** The due date of an invoice issued at `now` (D-52): its own, else `now` + the payment terms. */
export function dueDateAt(now: Date, termsDays: number, own?: Date | null): Date {
  return own ?? new Date(now.getTime() + termsDays * DAY_MS);
}

/**
 * Creates `inputs` as invoices in the order given (numbers follow that order, gapless and unique, D-50). Issued ones
 * spend their customers' store credit in that order (credits/ledger.ts); one with nothing left to pay is paid at
 * once. Answers each invoice with its lines and the events it causes, which the caller records (recordEvents) with
 * its own, after this, in the same transaction. Customers must exist (the invoice's foreign key refuses an unknown
 * one); callers that raise invoices for subscriptions hold those subscriptions' locks.
 *
 * The year's counter row is locked from the statement that takes the numbers until the caller's commit, and every
 * creation of the year queues on it. So everything that needs no number comes first: the settings, the prices, the
 * customers' ledger locks and the store credit plan, the lines (their foreign key to the invoice is checked at
 * commit); then one statement takes the numbers and inserts the invoices; after it only what must show a number is
 * written: the credit applications here ("Applied to INV-..."), then the caller's events and audit rows, each one
 * multi-row insert, and the commit. Callers write what needs no number before calling this.
 */
export async function createInvoices(trx: Db, inputs: NewInvoice[], clock: Clock = {}): Promise<CreatedInvoice[]> {
  if (inputs.length === 0) return [];
  const { now, numbering } = await issuingTime(trx, inputs, clock);
  const priced = await priceInputs(trx, inputs, { ...clock, now });
  const spend = await planCreditSpend(
    trx,
    priced
      .filter((p) => p.input.status === 'issued')
      .map((p) => ({
        customerId: p.input.customerId,
        currency: p.input.currency,
        due: p.totals.total,
        invoiceId: p.id,
      })),
  );
  const lines = await insertLineItems(trx, lineRows(priced));
  // The issued ones' emails (M-3) need no number: written before the counter is taken.
  await queueEmails(
    trx,
    priced.filter((p) => p.input.status === 'issued').map((p) => invoiceIssuedEmail(p.id, p.input.customerId)),
  );
  // From here to the caller's commit the year's counter row is locked.
  const invoices = await insertNumberedInvoices(trx, now.getUTCFullYear(), invoiceRows(priced, spend, now), numbering);
  await recordCreditSpend(trx, spend, new Map(invoices.map((i) => [i.id, i.invoice_number])));
  return issued(inputs, invoices, lines);
}

/**
 * When the invoices are issued and by which counter (issue 39): a test clock's customers' invoices are dated by their
 * clock (TC-2) unless the caller gives the moment (the clock's advance does), and numbered by their own counter,
 * `TST-{YEAR}-{SEQ}`, so that deleting a clock leaves the real invoices' numbers gapless (D-50). A batch is of one
 * kind: the sweep's batches are scoped to real customers or to one clock, other callers issue for one customer.
 */
async function issuingTime(trx: Db, inputs: NewInvoice[], clock: Clock) {
  const customerIds = [...new Set(inputs.map((i) => i.customerId))];
  const clockTimes = await customerClockTimes(trx, customerIds);
  if (clockTimes.size === 0) return { now: clock.now ?? new Date(), numbering: 'INV' as const };
  if (clockTimes.size !== customerIds.length)
    throw new Error('an invoice batch mixes customers on a test clock with others');
  return { now: clock.now ?? clockTimes.get(customerIds[0]!)!, numbering: 'TST' as const };
}

/** M-3 `invoice.issued`, once per invoice; the template reads the invoice (number, total, due) when it composes. */
export function invoiceIssuedEmail(invoiceId: string, customerId: string) {
  return { type: 'invoice.issued' as const, customerId, occasion: invoiceId, data: { invoiceId } };
}

interface Priced extends TaxedPrice {
  input: NewInvoice;
  id: string;
  /** For an issued invoice: its due date. */
  dueDate: Date | null;
}

/** Every invoice priced with its taxes (a negative total refused), what they need read once for all. */
async function priceInputs(trx: Db, inputs: NewInvoice[], clock: Clock): Promise<Priced[]> {
  const now = clock.now ?? new Date();
  const settings = await getSettings(trx, ['billing.payment_terms_days', ...TAX_SETTINGS], clock.settings);
  const termsDays = settings['billing.payment_terms_days'];
  const taxes = await loadTaxContext(trx, inputs, settings);
  return inputs.map((input) => {
    const price = priceWithTaxes(input, taxes);
    if (price.totals.total.isNegative()) {
      throw new AppError('invalid_request', 'The invoice total must not be negative', {
        details: [{ path: 'lineItems', message: 'the lines add up to a negative total' }],
      });
    }
    const dueDate = input.status === 'issued' ? dueDateAt(now, termsDays, input.dueDate) : (input.dueDate ?? null);
    return { ...price, input, id: input.id ?? newUuid(), dueDate };
  });
}

/** Each invoice's lines, numbered from 1, under the invoice id chosen for it. */
function lineRows(priced: Priced[]): LineItemInsert[] {
  return priced.flatMap(({ totals, id, lineRateIds }) =>
    totals.lines.map((l, position) => ({
      tax_rate_ids: lineRateIds[position] ?? [],
      invoice_id: id,
      position: position + 1,
      description: l.description,
      quantity: l.quantity,
      unit_price: l.unitPrice,
      amount: l.amount.toString(),
      usage: l.usage ?? null,
    })),
  );
}

/** The invoices to insert, given the store credit each issued one takes (`spend`, in the order of the issued ones). */
function invoiceRows(priced: Priced[], spend: CreditSpend, now: Date): InvoiceBulkInsert[] {
  const issuedIds = priced.filter((p) => p.input.status === 'issued').map((p) => p.id);
  const applied = new Map(issuedIds.map((id, i) => [id, spend.applied[i]!]));
  return priced.map(({ input, id, taxRate, totals, dueDate, taxes, taxExempt, customerTaxId }) => {
    const issue = input.status === 'issued';
    const credit = applied.get(id) ?? money(0);
    const settled = issue && totals.total.minus(credit).isZero();
    return {
      id,
      customer_id: input.customerId,
      subscription_id: input.subscriptionId ?? null,
      status: settled ? 'paid' : input.status,
      currency: input.currency,
      tax_rate: taxRate,
      subtotal: totals.subtotal.toString(),
      tax_amount: totals.taxAmount.toString(),
      taxes: storedTaxes(taxes, input.currency),
      tax_exempt: taxExempt,
      buyer_tax_id: taxExempt === 'reverse' ? customerTaxId : null,
      total: totals.total.toString(),
      credit_applied: credit.toString(),
      due_date: dueDate,
      issued_at: issue ? now : null,
      paid_at: settled ? now : null,
      period_start: input.period?.start ?? null,
      period_end: input.period?.end ?? null,
      created_at: now,
    };
  });
}

/** The created invoices with their lines and the events each causes, in the order of `inputs`. */
function issued(inputs: NewInvoice[], invoices: InvoiceRow[], lines: LineItemRow[]): CreatedInvoice[] {
  const linesOf = new Map<string, LineItemRow[]>();
  for (const line of lines) linesOf.set(line.invoice_id, [...(linesOf.get(line.invoice_id) ?? []), line]);
  return invoices.map((invoice, i) => {
    // invoice.created describes the invoice as created, before store credit settled it.
    const asCreated: InvoiceRow = { ...invoice, status: inputs[i]!.status, paid_at: null, credit_applied: '0' };
    const events: NewEvent[] = [{ type: 'invoice.created', data: invoiceEventData(asCreated) }];
    if (invoice.status === 'paid') events.push({ type: 'invoice.paid', data: invoiceEventData(invoice) });
    const own = (linesOf.get(invoice.id) ?? []).sort((a, b) => a.position - b.position);
    return { detail: { invoice, lines: own }, events };
  });
}
