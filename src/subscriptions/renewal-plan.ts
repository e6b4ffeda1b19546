/**
 * A renewal planned before it is written (D-81, D-44): what renewing a subscription up to a time does, computed from
 * its row, its plan and coupon and the periods already invoiced, without touching the database; and what a renewal
 * counts (RenewalResult). renew.ts writes the plans.
 */
import { newUuid } from '../crypto/ids.ts';
import type { CouponRow } from '../coupons/repo.ts';
import type { NewEvent } from '../events/service.ts';
import { periodKey } from '../invoices/service.ts';
import type { PlanRow } from '../plans/repo.ts';
import { periodLines } from '../pricing/plan-lines.ts';
import { periodInvoice, type PeriodInvoiceRequest } from './invoicing.ts';
import { periodBounds } from './periods.ts';
import type { SubscriptionRow } from './repo.ts';
import { serialiseSubscription } from './schema.ts';
import { transitionChanges, transitionEventType } from './transitions.ts';

export interface RenewalResult {
  periodsAdvanced: number;
  invoicesCreated: number;
  trialsEnded: number;
  canceled: number;
}

/** Renewals stop here even for a subscription years behind: the next batch or sweep continues. */
const MAX_PERIODS_PER_CALL = 120;

export const emptyResult = (): RenewalResult => ({
  periodsAdvanced: 0,
  invoicesCreated: 0,
  trialsEnded: 0,
  canceled: 0,
});

export function addResult(into: RenewalResult, more: RenewalResult): void {
  into.periodsAdvanced += more.periodsAdvanced;
  into.invoicesCreated += more.invoicesCreated;
  into.trialsEnded += more.trialsEnded;
  into.canceled += more.canceled;
}

/** What renewing one subscription does, in order: its events, with the invoices (by request index) among them. */
type Slot = { event: NewEvent } | { invoice: number };

/** The period whose usage an invoice bills in arrears (U-10): the one that ended when the invoiced one began. */
export interface ClosedPeriod {
  start: Date;
  end: Date;
  /** A trial's usage is billed at 0 (U-8). */
  trial: boolean;
}

export interface RenewalPlan {
  sub: SubscriptionRow;
  changed: boolean;
  slots: Slot[];
  requests: (Omit<PeriodInvoiceRequest, 'period'> & {
    id: string;
    period?: PeriodInvoiceRequest['period'];
    closes?: ClosedPeriod;
  })[];
  result: RenewalResult;
}

export const NOTHING_INVOICED: ReadonlySet<string> = new Set();

/**
 * Renewing one subscription up to `asOf`, computed without touching the database (D-81, D-44): ends a
 * finished trial, cancels at period end when scheduled (without a new invoice; a paused subscription too), and
 * advances every period that ended, invoicing each in advance unless `invoiced` says it already is. Otherwise paused
 * and canceled subscriptions stay as they are.
 */
export function planRenewal(
  start: SubscriptionRow,
  plan: PlanRow,
  coupon: CouponRow | undefined,
  asOf: Date,
  invoiced: ReadonlySet<string>,
  now: Date,
): RenewalPlan {
  let sub = start;
  const plan_: RenewalPlan = { sub, changed: false, slots: [], requests: [], result: emptyResult() };
  for (let i = 0; i < MAX_PERIODS_PER_CALL; i++) {
    if (sub.status === 'canceled') break;
    if (sub.current_period_end.getTime() > asOf.getTime()) break;
    // A pause stops invoicing, not a scheduled cancellation (D-44).
    if (sub.status === 'paused' && !sub.cancel_at_period_end) break;
    plan_.changed = true;
    if (sub.cancel_at_period_end) {
      sub = { ...sub, ...transitionChanges(sub, 'canceled', sub.current_period_end), updated_at: now };
      plan_.slots.push({ event: { type: transitionEventType('canceled'), data: serialiseSubscription(sub) } });
      plan_.result.canceled += 1;
      break;
    }
    const endsTrial = sub.status === 'trialing';
    const closes = { start: sub.current_period_start, end: sub.current_period_end, trial: endsTrial };
    const next = sub.period_number + 1;
    const bounds = periodBounds(sub.billing_anchor, sub.billing_cycle, next);
    sub = {
      ...sub,
      ...(endsTrial ? transitionChanges(sub, 'active', now) : {}),
      period_number: next,
      current_period_start: bounds.start,
      current_period_end: bounds.end,
      updated_at: now,
    };
    plan_.result.periodsAdvanced += 1;
    if (endsTrial) {
      plan_.result.trialsEnded += 1;
      plan_.slots.push({ event: { type: transitionEventType('active'), data: serialiseSubscription(sub) } });
    }
    if (invoiced.has(periodKey(sub.id, bounds.start))) continue;
    const { lines, usesCoupon } = periodLines(plan, coupon, sub.coupon_cycles_used, bounds);
    plan_.slots.push({ invoice: plan_.requests.length });
    // The invoice's id is chosen here so the audit row can name it before the invoice is issued.
    plan_.requests.push({ ...periodInvoice(sub, plan, bounds, lines), id: newUuid(), closes });
    if (usesCoupon) sub = { ...sub, coupon_cycles_used: sub.coupon_cycles_used + 1 };
    plan_.result.invoicesCreated += 1;
  }
  plan_.sub = sub;
  return plan_;
}
