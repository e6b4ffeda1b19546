/**
 * The one path by which invoices come to exist (D-50..D-52, D-57): a batch of new invoices, priced, numbered
 * by one counter update in the statement that stores them with their lines, and, when issued, given their
 * due date and paid from the customers' store credit. `createInvoice` is the batch of one; subscriptions and the lifecycle sweep
 * issue their periods' invoices through the same function.
 */
import { randomUUID } from 'node:crypto';
import { withSessionUser, type Actor } from '../audit/actor.ts';
import { auditInsertPart, type AuditEntry } from '../audit/service.ts';
import { creditSpendSql, planCreditSpend, recordCreditSpend, type CreditSpend } from '../credits/ledger.ts';
import type { HotLock } from '../db/hot-lock.ts';
import type { Db } from '../db/knex.ts';
import { jsonTextLiteral, textLiteral } from '../db/literal.ts';
import { AppError } from '../errors.ts';
import { recordEventsPart } from '../events/service.ts';
import type { EventType } from '../events/types.ts';
import { money } from '../money.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { invoiceEventData } from './events.ts';
import { insertNumberedInvoices, numberedInvoiceSql, readNumberedOne, type InvoiceBulkInsert, type InvoiceRow, type LineItemInsert, type LineItemRow, type NumberedOneRow } from './repo.ts';
import { priceInvoice, type LineInput } from './totals.ts';

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
  /** Percent; the `billing.default_tax_rate` setting when absent. */
  taxRate?: string;
  /** Issued invoices without one are due after `billing.payment_terms_days`. */
  dueDate?: Date | null;
  status: 'draft' | 'issued';
  /** The billing period a subscription's invoice covers (unique per subscription, D-82). */
  period?: { start: Date; end: Date };
}

/** An event to record, in order, in the transaction that made the change it describes. */
export interface PendingEvent {
  type: EventType;
  data: Record<string, unknown>;
}

export interface CreatedInvoice {
  detail: InvoiceDetail;
  /** invoice.created as of creation, then invoice.paid when store credit (or a zero total) settled it. */
  events: PendingEvent[];
}

const DAY_MS = 86_400_000;

/** The due date of an invoice issued at `now` (D-52): its own, else `now` + the payment terms. */
export function dueDateAt(now: Date, termsDays: number, own?: Date | null): Date {
  return own ?? new Date(now.getTime() + termsDays * DAY_MS);
}

/** The settings issuing reads, and only those its invoices need: none when each names its tax rate and none is issued. */
async function issuingSettings(trx: Db, inputs: NewInvoice[], clock: Clock): Promise<{ taxRate: () => string; termsDays: () => number }> {
  const keys: ('billing.default_tax_rate' | 'billing.payment_terms_days')[] = [];
  if (inputs.some((i) => i.taxRate === undefined)) keys.push('billing.default_tax_rate');
  if (inputs.some((i) => i.status === 'issued' && !i.dueDate)) keys.push('billing.payment_terms_days');
  const settings: Partial<{ 'billing.default_tax_rate': string; 'billing.payment_terms_days': number }> = keys.length > 0 ? await getSettings(trx, keys, clock.settings) : {};
  return { taxRate: () => settings['billing.default_tax_rate']!, termsDays: () => settings['billing.payment_terms_days']! };
}

/**
 * Creates `inputs` as invoices in the order given (numbers follow that order, gapless and unique, D-50).
 * Issued ones spend their customers' store credit in that order (planCreditSpend); one with nothing left to
 * pay is paid at once. Answers each invoice with its lines and the events it causes, for the caller to
 * record in order with its own (recordEvents). Customers must exist; callers that raise invoices for
 * subscriptions hold those subscriptions' locks.
 *
 * The year's counter row is locked from the statement that takes the numbers until the caller's commit,
 * and every creation of the year queues on it; so everything that does not need a number (settings,
 * prices, the credit ledger locks and balances) comes first, the numbers are taken by the statement that
 * writes the invoices and their lines, and after it only what must carry a number is written (credit
 * applications here, then the caller's events and audit rows). Callers write what needs no number before
 * calling this. A single creation that can end its transaction with it uses createInvoiceLast instead.
 */
export async function createInvoices(trx: Db, inputs: NewInvoice[], clock: Clock = {}): Promise<CreatedInvoice[]> {
  if (inputs.length === 0) return [];
  const plan = await planIssue(trx, inputs, clock);
  // From here to the caller's commit the year's counter row is locked.
  const { invoices, lines } = await insertNumberedInvoices(trx, plan.now.getUTCFullYear(), plan.rows, plan.lineRows);
  await recordCreditSpend(trx, plan.spend, numbersOf(invoices));
  return issued(inputs, invoices, lines);
}

/** What the last statement of a creation writes besides the invoice (createInvoiceLast). */
export interface WrittenWith {
  /** Events recorded before the invoice's own, in one batch with them (a new subscription's `subscription.created`). */
  eventsBefore?: PendingEvent[];
  /** The caller's audit entry (C-11), built from the invoice as created. */
  audit?: { actor: Actor; entry: (created: InvoiceDetail) => AuditEntry };
}

/**
 * createInvoices for ONE invoice as the end of a hot-lock transaction (db/hot-lock.ts): the same plan (settings,
 * prices, store credit), then one statement that takes the number and writes the invoice, its lines, its events
 * (after `withIt.eventsBefore`) with their deliveries and the caller's audit row, sent with the COMMIT in the same
 * round trip, so the year's counter is held for no round trip to Node at all. The events and the audit row are
 * built by their usual rules (invoiceEventData, the caller's entry) from the invoice as it will be stored, its
 * number a placeholder that the statement replaces with the number it takes. Store credit spent is written by
 * one more statement after it (its description names the number), with the COMMIT: then the counter is held for
 * one round trip. Nothing may run on `trx` afterwards. Answers the invoice and its lines as stored.
 */
export async function createInvoiceLast(trx: Db, input: NewInvoice, clock: Clock, lock: HotLock, withIt: WrittenWith = {}): Promise<InvoiceDetail> {
  const plan = await planIssue(trx, [input], clock);
  const row = plan.rows[0]!;
  const token = `{invoice-number:${row.id}}`;
  const [provisional] = issued([input], [storedRow(row, token)], plan.lineRows.map((l) => ({ id: '', ...l })));
  const events = recordEventsPart([...(withIt.eventsBefore ?? []), ...provisional!.events], '(select j from event_rows)');
  const sql = numberedInvoiceSql(
    plan.now.getUTCFullYear(),
    row,
    plan.lineRows,
    (numberSql, values, guard) => {
      // An actor whose session this statement checks (the guard) is written as the session's user.
      const actor = withIt.audit && withSessionUser(withIt.audit.actor, lock.sessionUser);
      const audit = withIt.audit && auditInsertPart(actor!, [withIt.audit.entry(provisional!.detail)], '(select j from audit_rows)', guard?.user);
      const tokenSql = values.add(textLiteral(token), 'text');
      const numbered = (json: string) => `replace(${values.add(jsonTextLiteral(json), 'text')}, ${tokenSql}, ${numberSql})::jsonb`;
      return [
        { text: `event_rows as (select ${numbered(events.value)} as j), ${events.text}`, read: events.read },
        ...(audit ? [{ text: `audit_rows as (select ${numbered(audit.value)} as j), audit_written as (${audit.text})` }] : []),
      ];
    },
    lock.guard,
  );
  const spendsCredit = plan.spend.entries.length > 0;
  const [answer] = await (spendsCredit ? lock.run<NumberedOneRow>(sql) : lock.finish<NumberedOneRow>(sql));
  const created = readNumberedOne(row, plan.lineRows, answer!, storedRow);
  if (spendsCredit) await lock.finish(creditSpendSql(plan.spend, numbersOf([created.invoice]))!);
  return created;
}

/** Whether issuing `inputs` reads or locks anything before the numbers (settings, store credit): else it is one statement. */
export function issuingReads(inputs: NewInvoice[]): boolean {
  return inputs.some((i) => i.taxRate === undefined || i.status === 'issued');
}

interface IssuePlan {
  now: Date;
  rows: InvoiceBulkInsert[];
  lineRows: LineItemInsert[];
  spend: CreditSpend;
}

/** Everything issuing decides before it takes numbers: settings, prices, lines, due dates and store credit (its ledger locks taken). */
async function planIssue(trx: Db, inputs: NewInvoice[], clock: Clock): Promise<IssuePlan> {
  const now = clock.now ?? new Date();
  const settings = await issuingSettings(trx, inputs, clock);
  const priced = inputs.map((input) => {
    const taxRate = input.taxRate ?? settings.taxRate();
    const totals = priceInvoice(input.lineItems, taxRate, input.currency);
    if (totals.total.isNegative()) {
      throw new AppError('invalid_request', 'The invoice total must not be negative', { details: [{ path: 'lineItems', message: 'the lines add up to a negative total' }] });
    }
    return { input, taxRate, totals, id: input.id ?? randomUUID() };
  });
  const issuedNow = priced.filter((p) => p.input.status === 'issued');
  const spend = await planCreditSpend(trx, issuedNow.map((p) => ({ customerId: p.input.customerId, currency: p.input.currency, due: p.totals.total, invoiceId: p.id })));
  const applied = new Map(issuedNow.map((p, i) => [p.id, spend.applied[i]!]));

  const rows: InvoiceBulkInsert[] = priced.map(({ input, taxRate, totals, id }) => {
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
      total: totals.total.toString(),
      credit_applied: credit.toString(),
      due_date: issue ? dueDateAt(now, settings.termsDays(), input.dueDate) : (input.dueDate ?? null),
      issued_at: issue ? now : null,
      paid_at: settled ? now : null,
      period_start: input.period?.start ?? null,
      period_end: input.period?.end ?? null,
      created_at: now,
    };
  });
  const lineRows = priced.flatMap(({ totals, id }) =>
    totals.lines.map((l, position) => ({ invoice_id: id, position: position + 1, description: l.description, quantity: l.quantity, unit_price: l.unitPrice, amount: l.amount.toString() })),
  );
  return { now, rows, lineRows, spend };
}

/** The created invoices with their lines and the events each causes, in the order of `inputs`. */
function issued(inputs: NewInvoice[], invoices: InvoiceRow[], lines: LineItemRow[]): CreatedInvoice[] {
  const linesOf = new Map<string, LineItemRow[]>();
  for (const line of lines) linesOf.set(line.invoice_id, [...(linesOf.get(line.invoice_id) ?? []), line]);
  return invoices.map((invoice, i) => {
    // invoice.created describes the invoice as created, before store credit settled it.
    const asCreated: InvoiceRow = { ...invoice, status: inputs[i]!.status, paid_at: null, credit_applied: '0' };
    const events: PendingEvent[] = [{ type: 'invoice.created', data: invoiceEventData(asCreated) }];
    if (invoice.status === 'paid') events.push({ type: 'invoice.paid', data: invoiceEventData(invoice) });
    return { detail: { invoice, lines: linesOf.get(invoice.id) ?? [] }, events };
  });
}

/** The row an insert of `row` stores (every column's default: the statement answers only updated_at's), numbered `invoiceNumber`. */
function storedRow(row: InvoiceBulkInsert, invoiceNumber: string): InvoiceRow {
  return {
    ...row, invoice_number: invoiceNumber, amount_paid: '0', credited_amount: '0', voided_at: null, overdue_at: null, content_version: 1,
    period_start: row.period_start ?? null, period_end: row.period_end ?? null, due_date: row.due_date ?? null, created_at: row.created_at ?? new Date(), updated_at: row.created_at ?? new Date(),
  };
}

const numbersOf = (invoices: InvoiceRow[]) => new Map(invoices.map((i) => [i.id, i.invoice_number]));
