import { findCoupon } from '../coupons/service.ts';
import type { Db } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { createInvoices, type Clock, type InvoiceDetail, type NewInvoice } from '../invoices/issue.ts';
import { findInvoicedPeriods } from '../invoices/service.ts';
import type { LineInput } from '../pricing/lines.ts';
import { periodLines } from '../pricing/plan-lines.ts';
import type { Period } from '../pricing/proration.ts';
import type { PlanRow } from '../plans/repo.ts';
import { updateSubscriptionRow, type SubscriptionRow } from './repo.ts';

/** A subscription's invoice for one billing period. */
export type PeriodInvoiceRequest = NewInvoice & { subscriptionId: string; period: Period };

/** T-2: a subscription's lines carry its plan's rates; a plan that names none leaves them to the customer's. */
export function planTaxRateIds(plan: Pick<PlanRow, 'tax_rate_ids'>): string[] | undefined {
  return plan.tax_rate_ids.length > 0 ? plan.tax_rate_ids : undefined;
}

/** The invoice of one billing period (billing in advance, D-42): issued at once, for the period it names. */
export function periodInvoice(
  sub: Pick<SubscriptionRow, 'id' | 'customer_id'>,
  plan: PlanRow,
  period: Period,
  lines: LineInput[],
): PeriodInvoiceRequest {
  return {
    customerId: sub.customer_id,
    subscriptionId: sub.id,
    currency: plan.currency,
    lineItems: lines,
    planTaxRateIds: planTaxRateIds(plan),
    status: 'issued',
    period,
  };
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
export async function invoicePeriod(
  trx: Db,
  sub: SubscriptionRow,
  plan: PlanRow,
  period: Period,
  clock: Clock,
): Promise<PeriodInvoice> {
  const coupon = sub.coupon_id ? await findCoupon(trx, sub.coupon_id) : null;
  return issuePeriodInvoice(trx, sub, plan, period, periodLines(plan, coupon, sub.coupon_cycles_used, period), clock);
}

/** invoicePeriod with lines already worked out by periodLines (a plan change previews them before issuing). */
export async function issuePeriodInvoice(
  trx: Db,
  sub: SubscriptionRow,
  plan: PlanRow,
  period: Period,
  priced: { lines: LineInput[]; usesCoupon: boolean },
  clock: Clock,
): Promise<PeriodInvoice> {
  if ((await findInvoicedPeriods(trx, [{ subscriptionId: sub.id, periodStart: period.start }])).size > 0)
    return { invoice: null, subscription: sub };
  const [issued] = await createInvoices(trx, [periodInvoice(sub, plan, period, priced.lines)], clock);
  await recordEvents(trx, issued!.events);
  const subscription = priced.usesCoupon
    ? await updateSubscriptionRow(trx, sub.id, { coupon_cycles_used: sub.coupon_cycles_used + 1 })
    : sub;
  return { invoice: issued!.detail, subscription };
}

/** A one-off invoice of `lineItems` for the subscription (a plan change's proration, D-45); not tied to a period. */
export async function invoiceProration(
  trx: Db,
  sub: SubscriptionRow,
  plan: PlanRow,
  lineItems: LineInput[],
  clock: Clock,
): Promise<InvoiceDetail> {
  const invoice: NewInvoice = {
    customerId: sub.customer_id,
    subscriptionId: sub.id,
    lineItems,
    currency: plan.currency,
    planTaxRateIds: planTaxRateIds(plan),
    status: 'issued',
  };
  const [issued] = await createInvoices(trx, [invoice], clock);
  await recordEvents(trx, issued!.events);
  return issued!.detail;
}
