import { randomUUID } from 'node:crypto';
import type { Db } from '../db/knex.ts';
import type { EventType } from '../events/types.ts';
import { recordEvents } from '../events/service.ts';
import { insertLedgerEntries, ledgerBalances, lockCustomerLedgers } from '../credits/ledger-repo.ts';
import { couponApplies, discountFor } from '../coupons/discount.ts';
import { findCouponRow, type CouponRow } from '../coupons/repo.ts';
import { AppError } from '../errors.ts';
import { invoiceEventData } from '../invoices/events.ts';
import { reserveDocumentNumbers } from '../invoices/numbering.ts';
import { insertInvoiceRows, insertLineItemRowsMany, type InvoiceBulkInsert, type InvoiceRow, type LineItemRow } from '../invoices/repo.ts';
import { createInvoice, type Clock, type InvoiceDetail } from '../invoices/service.ts';
import { priceInvoice, type LineInput } from '../invoices/totals.ts';
import { money, Money } from '../money.ts';
import type { PlanRow } from '../plans/repo.ts';
import { getSettings } from '../settings/service.ts';
import { findInvoicedPeriods } from './renewal-repo.ts';
import { updateSubscriptionRow, type SubscriptionRow } from './repo.ts';

const day = (d: Date) => d.toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

export interface Period {
  start: Date;
  end: Date;
}

/** One billing period to invoice: whose, at which price, for when. */
export interface PeriodInvoiceRequest {
  customerId: string;
  subscriptionId: string;
  plan: PlanRow;
  period: Period;
  lines: LineInput[];
}

/** An event to record, in order, with the invoices it belongs to. */
export interface PendingEvent {
  type: EventType;
  data: Record<string, unknown>;
}

/**
 * The lines of one period's invoice (D-46): the plan's price, and the coupon's discount as a negative
 * line while the coupon lasts (`cyclesUsed` discounted invoices so far). `usesCoupon` says whether this
 * invoice spends one of the coupon's cycles.
 */
export function periodLines(plan: PlanRow, coupon: CouponRow | null | undefined, cyclesUsed: number, period: Period): { lines: LineInput[]; usesCoupon: boolean } {
  const lines: LineInput[] = [{ description: `${plan.name} (${plan.billing_cycle}) ${day(period.start)} to ${day(period.end)}`, quantity: 1, unitPrice: plan.base_price }];
  if (!coupon || !couponApplies(coupon, cyclesUsed)) return { lines, usesCoupon: false };
  const discount = discountFor(coupon, plan.base_price, plan.currency);
  if (discount.gt(0)) lines.push({ description: `Discount (${coupon.code})`, quantity: 1, unitPrice: discount.negated().toString() });
  return { lines, usesCoupon: true };
}

/**
 * Issues the invoices of many billing periods at once (billing in advance, D-42), exactly as
 * `createInvoice` + issue would one by one (D-50..D-52, D-57): numbered in the order given from one
 * counter update (gapless, unique), priced with the default tax rate, issued at `clock.now` with the
 * payment terms, the customers' store credit spent on them in order under their ledger locks, and a
 * zero amount due paid at once. Answers the invoices in request order, and for each the events it
 * causes (invoice.created as of its creation, then invoice.paid when settled), for the caller to record
 * in order with its own. The callers hold the subscriptions' row locks.
 */
export async function issuePeriodInvoices(trx: Db, requests: PeriodInvoiceRequest[], clock: Clock & { now: Date }): Promise<{ detail: InvoiceDetail; events: PendingEvent[] }[]> {
  if (requests.length === 0) return [];
  const now = clock.now;
  const settings = await getSettings(trx, ['billing.default_tax_rate', 'billing.payment_terms_days'], clock.settings);
  const taxRate = settings['billing.default_tax_rate'];
  const dueDate = new Date(now.getTime() + settings['billing.payment_terms_days'] * DAY_MS);
  const numbers = await reserveDocumentNumbers(trx, 'INV', now, requests.length);

  // Issuing spends store credit (D-57): lock every customer's ledger (in id order), then read the balances.
  const customerIds = [...new Set(requests.map((r) => r.customerId))];
  await lockCustomerLedgers(trx, customerIds);
  const balances = new Map<string, Money>();
  for (const row of await ledgerBalances(trx, customerIds)) balances.set(`${row.customer_id}:${row.currency}`, money(row.balance));

  const rows: InvoiceBulkInsert[] = [];
  const applications: Parameters<typeof insertLedgerEntries>[1] = [];
  const prices = requests.map((request, i) => {
    const totals = priceInvoice(request.lines, taxRate, request.plan.currency);
    if (totals.total.isNegative()) throw new AppError('invalid_request', `The invoice of subscription ${request.subscriptionId} would have a negative total`);
    const currency = request.plan.currency;
    const total = totals.total;
    let status: InvoiceRow['status'] = 'issued';
    let creditApplied = money(0);
    if (total.isZero()) status = 'paid';
    else {
      const key = `${request.customerId}:${currency}`;
      const balance = balances.get(key) ?? money(0);
      const applied = Money.min(balance, total);
      if (applied.gt(0)) {
        creditApplied = applied;
        balances.set(key, balance.minus(applied));
        applications.push({ customer_id: request.customerId, currency, amount: applied.negated().toString(), kind: 'application', description: `Applied to ${numbers[i]}`, invoice_id: null });
        if (applied.eq(total)) status = 'paid';
      }
    }
    const id = randomUUID();
    if (creditApplied.gt(0)) applications[applications.length - 1]!.invoice_id = id;
    rows.push({
      id,
      customer_id: request.customerId,
      subscription_id: request.subscriptionId,
      invoice_number: numbers[i]!,
      status,
      currency,
      tax_rate: taxRate,
      subtotal: totals.subtotal.toString(),
      tax_amount: totals.taxAmount.toString(),
      total: total.toString(),
      credit_applied: creditApplied.toString(),
      due_date: dueDate,
      issued_at: now,
      paid_at: status === 'paid' ? now : null,
      period_start: request.period.start,
      period_end: request.period.end,
      created_at: now,
    });
    return totals;
  });

  const invoices = await insertInvoiceRows(trx, rows);
  const lines = await insertLineItemRowsMany(
    trx,
    invoices.flatMap((invoice, i) =>
      prices[i]!.lines.map((l, position) => ({ invoice_id: invoice.id, position: position + 1, description: l.description, quantity: l.quantity, unit_price: l.unitPrice, amount: l.amount.toString() })),
    ),
  );
  await insertLedgerEntries(trx, applications);
  const linesOf = new Map<string, LineItemRow[]>();
  for (const line of lines) linesOf.set(line.invoice_id, [...(linesOf.get(line.invoice_id) ?? []), line]);

  return invoices.map((invoice) => {
    // invoice.created describes the invoice as issued, before store credit settled it (as createInvoice records it).
    const asCreated: InvoiceRow = { ...invoice, status: 'issued', paid_at: null, credit_applied: '0' };
    const events: PendingEvent[] = [{ type: 'invoice.created', data: invoiceEventData(asCreated) }];
    if (invoice.status === 'paid') events.push({ type: 'invoice.paid', data: invoiceEventData(invoice) });
    const sorted = (linesOf.get(invoice.id) ?? []).sort((a, b) => a.position - b.position);
    return { detail: { invoice, lines: sorted }, events };
  });
}

export interface PeriodInvoice {
  invoice: InvoiceDetail | null;
  subscription: SubscriptionRow;
}

/**
 * Issues the invoice of one billing period (billing in advance) through the same code as the sweep's
 * batches. The subscription must be locked by the caller; a period already invoiced is left alone (the
 * unique index on (subscription, period start) is the backstop, D-82).
 */
export async function invoicePeriod(trx: Db, sub: SubscriptionRow, plan: PlanRow, period: Period, clock: Clock): Promise<PeriodInvoice> {
  if ((await findInvoicedPeriods(trx, [{ subscriptionId: sub.id, periodStart: period.start }])).size > 0) return { invoice: null, subscription: sub };
  const coupon = sub.coupon_id ? await findCouponRow(trx, sub.coupon_id) : null;
  const { lines, usesCoupon } = periodLines(plan, coupon, sub.coupon_cycles_used, period);
  const [issued] = await issuePeriodInvoices(trx, [{ customerId: sub.customer_id, subscriptionId: sub.id, plan, period, lines }], { ...clock, now: clock.now ?? new Date() });
  await recordEvents(trx, issued!.events);
  const subscription = usesCoupon ? await updateSubscriptionRow(trx, sub.id, { coupon_cycles_used: sub.coupon_cycles_used + 1 }) : sub;
  return { invoice: issued!.detail, subscription };
}

/** A one-off invoice for the rest of a period after a plan change (D-45); not tied to a period. */
export async function invoiceProration(trx: Db, sub: SubscriptionRow, plan: PlanRow, amount: string, until: Date, clock: Clock): Promise<InvoiceDetail> {
  const lineItems = [{ description: `${plan.name}: remaining time until ${day(until)} (prorated)`, quantity: 1, unitPrice: amount }];
  return createInvoice(trx, { customerId: sub.customer_id, subscriptionId: sub.id, lineItems, currency: plan.currency, status: 'issued' }, clock);
}
