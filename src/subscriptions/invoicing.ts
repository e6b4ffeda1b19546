import type { Db } from '../db/knex.ts';
import { findCouponRow } from '../coupons/repo.ts';
import { couponApplies, discountFor } from '../coupons/discount.ts';
import { createInvoice, type Clock, type InvoiceDetail } from '../invoices/service.ts';
import type { LineInput } from '../invoices/totals.ts';
import type { PlanRow } from '../plans/repo.ts';
import { updateSubscriptionRow, type SubscriptionRow } from './repo.ts';

const day = (d: Date) => d.toISOString().slice(0, 10);

export interface PeriodInvoice {
  invoice: InvoiceDetail | null;
  subscription: SubscriptionRow;
}

/**
 * Issues the invoice of one billing period (billing in advance): the plan's price, and the
 * coupon's discount as a negative line while the coupon lasts (D-46). The subscription must be
 * locked by the caller; a period already invoiced is left alone (the unique index on
 * (subscription, period start) is the backstop, D-82).
 */
export async function invoicePeriod(trx: Db, sub: SubscriptionRow, plan: PlanRow, period: { start: Date; end: Date }, clock: Clock): Promise<PeriodInvoice> {
  const existing = await trx('invoices').where({ subscription_id: sub.id, period_start: period.start }).first('id');
  if (existing) return { invoice: null, subscription: sub };
  const lines: LineInput[] = [{ description: `${plan.name} (${plan.billing_cycle}) ${day(period.start)} to ${day(period.end)}`, quantity: 1, unitPrice: plan.base_price }];
  let subscription = sub;
  if (sub.coupon_id) {
    const coupon = await findCouponRow(trx, sub.coupon_id);
    if (coupon && couponApplies(coupon, sub.coupon_cycles_used)) {
      const discount = discountFor(coupon, plan.base_price, plan.currency);
      if (discount.gt(0)) lines.push({ description: `Discount (${coupon.code})`, quantity: 1, unitPrice: discount.negated().toString() });
      subscription = await updateSubscriptionRow(trx, sub.id, { coupon_cycles_used: sub.coupon_cycles_used + 1 });
    }
  }
  const invoice = await createInvoice(trx, { customerId: sub.customer_id, subscriptionId: sub.id, lineItems: lines, currency: plan.currency, status: 'issued', period }, clock);
  return { invoice, subscription };
}

/** A one-off invoice for the rest of a period after a plan change (D-45); not tied to a period. */
export async function invoiceProration(trx: Db, sub: SubscriptionRow, plan: PlanRow, amount: string, until: Date, clock: Clock): Promise<InvoiceDetail> {
  const lineItems = [{ description: `${plan.name}: remaining time until ${day(until)} (prorated)`, quantity: 1, unitPrice: amount }];
  return createInvoice(trx, { customerId: sub.customer_id, subscriptionId: sub.id, lineItems, currency: plan.currency, status: 'issued' }, clock);
}
