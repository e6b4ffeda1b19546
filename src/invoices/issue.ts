/**
 * The one path by which invoices come to exist (D-50..D-52, D-57): a batch of new invoices, priced, numbered
 * by one counter update in the statement that stores them with their lines, and, when issued, given their
 * due date and paid from the customers' store credit. `createInvoice` is the batch of one; subscriptions and the
 * lifecycle sweep issue their periods' invoices through the same function.
 */
import { newUuid } from '../crypto/ids.ts';
import { withSessionUser, type Actor } from '../audit/actor.ts';
import { auditInsertPart, type AuditEntry } from '../audit/service.ts';
import {
  creditSpendPart,
  creditSpendSql,
  hasCredit,
  lockCreditedCustomers,
  planCreditSpend,
  readCreditBalances,
  recordCreditSpend,
  spendFromBalances,
  type BalanceRow,
  type CreditSpend,
} from '../credits/ledger.ts';
import type { HotLock } from '../db/hot-lock.ts';
import type { Db } from '../db/knex.ts';
import { jsonLiteral, jsonTextLiteral, textLiteral } from '../db/literal.ts';
import { AppError } from '../errors.ts';
import { newEventIds, recordEventsFromPart, recordEventsPart } from '../events/service.ts';
import type { EventType } from '../events/types.ts';
import { money } from '../money.ts';
import { getSettings, type SettingOverrides } from '../settings/service.ts';
import { invoiceEventData } from './events.ts';
import {
  insertNumberedInvoices,
  numberedBatchSql,
  numberedInvoiceSql,
  readNumberedOne,
  writeLineItems,
  type InvoiceBulkInsert,
  type InvoiceRow,
  type LineItemInsert,
  type LineItemRow,
  type NumberedOneRow,
} from './repo.ts';
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

/**
 * The settings issuing reads, and only those its invoices need: none when each names its tax rate and none is issued.
 */
async function issuingSettings(
  trx: Db,
  inputs: NewInvoice[],
  clock: Clock,
): Promise<{ taxRate: () => string; termsDays: () => number }> {
  const keys: ('billing.default_tax_rate' | 'billing.payment_terms_days')[] = [];
  if (inputs.some((i) => i.taxRate === undefined)) keys.push('billing.default_tax_rate');
  if (inputs.some((i) => i.status === 'issued' && !i.dueDate)) keys.push('billing.payment_terms_days');
  const settings: Partial<{ 'billing.default_tax_rate': string; 'billing.payment_terms_days': number }> =
    keys.length > 0 ? await getSettings(trx, keys, clock.settings) : {};
  return {
    taxRate: () => settings['billing.default_tax_rate']!,
    termsDays: () => settings['billing.payment_terms_days']!,
  };
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

/**
 * An event of a batch numbered by numberInvoiceBatch: `invoiceId` names the invoice of the batch whose number its data
 * shows.
 */
export interface BatchEvent extends PendingEvent {
  /**
   * An id chosen before (events/service.ts newEventIds), whose deliveries were written ahead (fanOutAhead); else new,
   * fanned out with it.
   */
  id?: string;
  invoiceId?: string;
}

/** A batch planned by planInvoiceBatch, numbered and written by numberInvoiceBatch. */
export interface PlannedBatch {
  pricing: Pricing;
  /** The customers' balances read without their ledger locks (credits/ledger.ts readCreditBalances). */
  balances: BalanceRow[];
  plan: IssuePlan;
  events: BatchEvent[];
  eventsOf: (created: CreatedInvoice[]) => BatchEvent[];
}

/**
 * createInvoices for a batch whose numbered write is the LAST statement of a hot-lock transaction (the sweep's
 * batches), in two steps. planInvoiceBatch, before the caller's turn to take numbers: settings, prices, due dates,
 * store credit planned with balances read without the ledger locks (credits/ledger.ts readCreditBalances), the lines
 * written (they show no number; their foreign key to the invoice is checked at commit), and the invoices as they will
 * be stored with their numbers as placeholders, from which `eventsOf` (the caller's) builds the events in the order to
 * record them, with their payloads by their usual rules (invoiceEventData). Nothing is else is written and no lock
 * taken.
 */
export async function planInvoiceBatch(
  trx: Db,
  inputs: NewInvoice[],
  clock: Clock,
  eventsOf: (created: CreatedInvoice[]) => BatchEvent[],
): Promise<PlannedBatch> {
  const pricing = await priceInputs(trx, inputs, clock);
  const claims = creditClaims(pricing);
  const balances =
    claims.length > 0
      ? await readCreditBalances(
          trx,
          claims.map((c) => c.customerId),
        )
      : [];
  const plan = issueRows(pricing, spendFromBalances(claims, balances));
  // The lines show no number and name their invoice by the id chosen here: written now (their foreign key is checked at
  // commit).
  await writeLineItems(trx, plan.lineRows);
  return { pricing, balances, plan, events: eventsOf(provisionally(inputs, plan)), eventsOf };
}

/**
 * numberInvoiceBatch, in the caller's turn: the ledger locks of the customers that had credit (balances read again
 * under them; the plan made again only if they changed), then ONE statement that takes the year's numbers and writes
 * the invoices, their lines, the store credit spent ("Applied to INV-...") and the events (the numbers put into
 * their payloads by the statement) with the deliveries not written ahead, sent with the COMMIT: the counter is held
 * for no round trip to Node. It answers once committed; the wait for the WAL flush comes when the caller's
 * transaction ends (db/hot-lock.ts `flushLater`). Nothing may run on the transaction afterwards. `waitFor`: SQL of
 * a condition the statement evaluates (and waits on) just before it takes the numbers, after its values are parsed
 * and its plan made (the sweep's turn, sent ahead of it: subscriptions/renewal-repo.ts batchTurnSql).
 */
export async function numberInvoiceBatch(trx: Db, batch: PlannedBatch, lock: HotLock, waitFor?: string): Promise<void> {
  let { plan, events } = batch;
  const relocked = await lockCreditedCustomers(trx, batch.balances);
  if (relocked) {
    plan = issueRows(batch.pricing, spendFromBalances(creditClaims(batch.pricing), relocked));
    events = batch.eventsOf(
      provisionally(
        batch.pricing.priced.map((p) => p.input),
        plan,
      ),
    );
  }
  const fresh = newEventIds(events.filter((e) => !e.id).length);
  let next = 0;
  const rows = events.map((e) => ({
    id: e.id ?? fresh[next++]!,
    type: e.type,
    invoice: e.invoiceId ?? null,
    at: e.invoiceId ? numberField(e) : null,
    data: e.data,
  }));
  // Each payload holds its invoice's placeholder (numberToken) in the field where the number goes; the statement sets
  // it there.
  const eventRows = `rows from (jsonb_to_recordset(${jsonLiteral(rows)}::jsonb)
                         as (id text, type text, invoice uuid, at text, data jsonb))
                    with ordinality as e(id, type, invoice, at, data, n)`;
  if (plan.rows.length === 0) {
    // No invoice (a batch of scheduled cancellations): its events alone, and no counter taken.
    const recorded = recordEventsFromPart(`select e.id, e.type, e.data, e.n from ${eventRows}`, fresh);
    await lock.finish(`with ${recorded.text} select n from ${recorded.read}`, { flushLater: true });
    return;
  }
  const source = `select e.id, e.type,
              case when i.id is null then e.data else jsonb_set(e.data, array[e.at], to_jsonb(i.invoice_number)) end
                as data,
              e.n
       from ${eventRows} left join inserted i on i.id = e.invoice`;
  const recorded = recordEventsFromPart(source, fresh);
  const tokens = new Map(plan.rows.map((r) => [r.id, numberToken(r.id)]));
  const spent = creditSpendPart(
    plan.spend,
    tokens,
    (json) =>
      `(select coalesce(jsonb_agg(replace(x.e::text, ${numberTokenSql('i.id')}, i.invoice_number)::jsonb
                                  order by x.n), '[]'::jsonb)
          from jsonb_array_elements(${jsonTextLiteral(json)}::jsonb) with ordinality as x(e, n)
          join inserted i on i.id = (x.e->>'invoice_id')::uuid)`,
  );
  const parts = [
    { text: recorded.text, read: recorded.read },
    ...(spent ? [{ text: `credit_spent as (${spent})` }] : []),
  ];
  await lock.finish(numberedBatchSql(plan.now.getUTCFullYear(), plan.rows, [], parts, waitFor), { flushLater: true });
}

/**
 * Whether numberInvoiceBatch takes ledger locks (a round trip) before its statement: some customer of the batch had
 * store credit. A batch that does not is one statement, which a caller may send before its turn with `waitFor`.
 */
export function takesLedgerLocks(batch: PlannedBatch): boolean {
  return hasCredit(batch.balances);
}

/**
 * The field of an event's payload that holds its invoice's number placeholder (a top-level field: invoiceEventData's
 * `invoiceNumber`).
 */
function numberField(event: BatchEvent): string {
  const placeholder = numberToken(event.invoiceId!);
  for (const [key, value] of Object.entries(event.data)) if (value === placeholder) return key;
  throw new Error(
    `the ${event.type} event of invoice ${event.invoiceId} does not show its number in a top-level field`,
  );
}

/**
 * Where an invoice's number goes in a payload built before the number is taken, and its SQL from the SQL of the
 * invoice's id.
 */
const numberToken = (invoiceId: string) => `{invoice-number:${invoiceId}}`;
const numberTokenSql = (invoiceIdSql: string) => `('{invoice-number:' || ${invoiceIdSql} || '}')`;

/** The invoices of `plan` as they will be stored, their numbers placeholders (numberToken), with their events. */
const provisionally = (inputs: NewInvoice[], plan: IssuePlan) =>
  issued(
    inputs,
    plan.rows.map((r) => storedRow(r, numberToken(r.id))),
    plan.lineRows.map((l) => ({ id: '', ...l })),
  );

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
export async function createInvoiceLast(
  trx: Db,
  input: NewInvoice,
  clock: Clock,
  lock: HotLock,
  withIt: WrittenWith = {},
): Promise<InvoiceDetail> {
  const plan = await planIssue(trx, [input], clock);
  const row = plan.rows[0]!;
  const token = numberToken(row.id);
  const [provisional] = provisionally([input], plan);
  const events = recordEventsPart(
    [...(withIt.eventsBefore ?? []), ...provisional!.events],
    '(select j from event_rows)',
  );
  const sql = numberedInvoiceSql(
    plan.now.getUTCFullYear(),
    row,
    plan.lineRows,
    (numberSql, values, guard) => {
      // An actor whose session this statement checks (the guard) is written as the session's user.
      const actor = withIt.audit && withSessionUser(withIt.audit.actor, lock.sessionUser);
      const audit =
        withIt.audit &&
        auditInsertPart(actor!, [withIt.audit.entry(provisional!.detail)], '(select j from audit_rows)', guard?.user);
      const tokenSql = values.add(textLiteral(token), 'text');
      const numbered = (json: string) =>
        `replace(${values.add(jsonTextLiteral(json), 'text')}, ${tokenSql}, ${numberSql})::jsonb`;
      return [
        { text: `event_rows as (select ${numbered(events.value)} as j), ${events.text}`, read: events.read },
        ...(audit
          ? [{ text: `audit_rows as (select ${numbered(audit.value)} as j), audit_written as (${audit.text})` }]
          : []),
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

/**
 * Whether issuing `inputs` reads or locks anything before the numbers (settings, store credit): else it is one
 * statement.
 */
export function issuingReads(inputs: NewInvoice[]): boolean {
  return inputs.some((i) => i.taxRate === undefined || i.status === 'issued');
}

interface IssuePlan {
  now: Date;
  rows: InvoiceBulkInsert[];
  lineRows: LineItemInsert[];
  spend: CreditSpend;
}

/**
 * Everything issuing decides before it takes numbers: settings, prices, lines, due dates and store credit (its ledger
 * locks taken).
 */
async function planIssue(trx: Db, inputs: NewInvoice[], clock: Clock): Promise<IssuePlan> {
  const pricing = await priceInputs(trx, inputs, clock);
  return issueRows(pricing, await planCreditSpend(trx, creditClaims(pricing)));
}

interface Pricing {
  now: Date;
  termsDays: () => number;
  priced: { input: NewInvoice; taxRate: string; totals: ReturnType<typeof priceInvoice>; id: string }[];
}

/** The settings issuing needs and every invoice priced (a negative total refused). */
async function priceInputs(trx: Db, inputs: NewInvoice[], clock: Clock): Promise<Pricing> {
  const now = clock.now ?? new Date();
  const settings = await issuingSettings(trx, inputs, clock);
  const priced = inputs.map((input) => {
    const taxRate = input.taxRate ?? settings.taxRate();
    const totals = priceInvoice(input.lineItems, taxRate, input.currency);
    if (totals.total.isNegative()) {
      throw new AppError('invalid_request', 'The invoice total must not be negative', {
        details: [{ path: 'lineItems', message: 'the lines add up to a negative total' }],
      });
    }
    return { input, taxRate, totals, id: input.id ?? newUuid() };
  });
  return { now, termsDays: settings.termsDays, priced };
}

/** What the issued invoices ask of their customers' store credit, in order. */
const creditClaims = ({ priced }: Pricing) =>
  priced
    .filter((p) => p.input.status === 'issued')
    .map((p) => ({ customerId: p.input.customerId, currency: p.input.currency, due: p.totals.total, invoiceId: p.id }));

/** The rows to write, given the store credit each issued invoice takes (`spend`, in the order of creditClaims). */
function issueRows({ now, termsDays, priced }: Pricing, spend: CreditSpend): IssuePlan {
  const issuedNow = priced.filter((p) => p.input.status === 'issued');
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
      due_date: issue ? dueDateAt(now, termsDays(), input.dueDate) : (input.dueDate ?? null),
      issued_at: issue ? now : null,
      paid_at: settled ? now : null,
      period_start: input.period?.start ?? null,
      period_end: input.period?.end ?? null,
      created_at: now,
    };
  });
  const lineRows = priced.flatMap(({ totals, id }) =>
    totals.lines.map((l, position) => ({
      invoice_id: id,
      position: position + 1,
      description: l.description,
      quantity: l.quantity,
      unit_price: l.unitPrice,
      amount: l.amount.toString(),
    })),
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

/**
 * The row an insert of `row` stores (every column's default: the statement answers only updated_at's), numbered
 * `invoiceNumber`.
 */
function storedRow(row: InvoiceBulkInsert, invoiceNumber: string): InvoiceRow {
  return {
    ...row,
    invoice_number: invoiceNumber,
    amount_paid: '0',
    credited_amount: '0',
    voided_at: null,
    overdue_at: null,
    content_version: 1,
    period_start: row.period_start ?? null,
    period_end: row.period_end ?? null,
    due_date: row.due_date ?? null,
    created_at: row.created_at ?? new Date(),
    updated_at: row.created_at ?? new Date(),
  };
}

const numbersOf = (invoices: InvoiceRow[]) => new Map(invoices.map((i) => [i.id, i.invoice_number]));
