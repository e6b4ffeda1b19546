/**
 * Changing a subscription's plan (D-45), in two steps so the console's preview and the change itself share
 * one computation: `planChange` works out, without writing, what the change does (the subscription's new
 * fields, the store credit for unused time, the invoice it issues at once); `previewPlanChange` answers that
 * plan, and `changePlan` carries it out.
 */
import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { CouponRow } from '../coupons/repo.ts';
import { findCoupon } from '../coupons/service.ts';
import { nowForCustomer } from '../customers/clock.ts';
import { addLedgerEntry } from '../credits/ledger.ts';
import { usageAtPlanChange } from './usage-billing.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { recordEvents } from '../events/service.ts';
import { AppError } from '../errors.ts';
import { priceNewInvoice, type Clock, type InvoiceDetail } from '../invoices/service.ts';
import type { PlanRow } from '../plans/repo.ts';
import { requirePlan, requireUsablePlan } from '../plans/service.ts';
import type { LineInput } from '../pricing/lines.ts';
import { periodLines, prorationLines } from '../pricing/plan-lines.ts';
import { proratedAmount } from '../pricing/proration.ts';
import type { Period } from '../pricing/proration.ts';
import { invoiceProration, issuePeriodInvoice, planTaxRateIds } from './invoicing.ts';
import { updateSubscriptionRow, type SubscriptionChanges, type SubscriptionRow } from './repo.ts';
import type { ChangePlanInput } from './schema.ts';
import { assertLive, auditedSubscription, freshPeriod, getSubscription, lockLiveSubscription } from './service.ts';
import { subscriptionEvent } from './transitions.ts';

/** How far back a `prorationDate` may go: long enough to read a preview, too short to backdate a change. */
export const PRORATION_DATE_MAX_AGE_MS = 60 * 60 * 1000;

/** The invoice a change issues at once: the rest of the period on the new plan, or a new cycle's first period. */
export interface PlanChangeCharge {
  lines: LineInput[];
  /** Set when the change restarts billing periods: the invoice is that period's (and may spend a coupon cycle). */
  period?: Period;
  usesCoupon: boolean;
}

/** What a plan change does, worked out before anything is written. */
export interface PlanChange {
  oldPlan: PlanRow;
  newPlan: PlanRow;
  /** The instant the unused time is measured from. */
  at: Date;
  changes: SubscriptionChanges;
  /** Store credit for the unused time on the old plan (D-45). */
  credit: { amount: string; description: string } | null;
  charge: PlanChangeCharge | null;
}

/**
 * D-45. Prorated (default): the unused fraction of the period, by seconds, of the old price goes to the
 * credit balance and the same fraction of the new price is invoiced at once (the credit applies to it).
 * prorate false: the new price starts next period. A new billing cycle restarts the period now (prorated)
 * or at the current period's end (not prorated). Trialing subscriptions swap plans without proration, and
 * paused ones, which are not billing, have nothing unused to credit or charge.
 */
export function planChange(
  sub: SubscriptionRow,
  oldPlan: PlanRow,
  newPlan: PlanRow,
  coupon: CouponRow | null | undefined,
  prorate: boolean,
  at: Date,
): PlanChange {
  const cycleChanges = newPlan.billing_cycle !== sub.billing_cycle;
  const swap: SubscriptionChanges = { plan_id: newPlan.id, billing_cycle: newPlan.billing_cycle };
  const plain = (changes: SubscriptionChanges): PlanChange => ({
    oldPlan,
    newPlan,
    at,
    changes,
    credit: null,
    charge: null,
  });
  if (sub.status === 'trialing') return plain(swap);
  if (!prorate) {
    // The new plan bills from the next period; a new cycle is anchored where the current period ends.
    return plain(
      cycleChanges ? { ...swap, billing_anchor: sub.current_period_end, period_number: -1 } : { plan_id: newPlan.id },
    );
  }
  if (sub.status === 'paused') return plain(swap);
  const current = { start: sub.current_period_start, end: sub.current_period_end };
  const unused = proratedAmount(oldPlan.base_price, current, at, oldPlan.currency);
  const credit = unused.gt(0) ? { amount: unused.toString(), description: `Unused time on ${oldPlan.name}` } : null;
  if (cycleChanges) {
    const restart = freshPeriod(at, newPlan.billing_cycle);
    const period = { start: restart.current_period_start, end: restart.current_period_end };
    return {
      oldPlan,
      newPlan,
      at,
      changes: { ...swap, ...restart },
      credit,
      charge: { ...periodLines(newPlan, coupon, sub.coupon_cycles_used, period), period },
    };
  }
  const rest = proratedAmount(newPlan.base_price, current, at, newPlan.currency);
  return {
    oldPlan,
    newPlan,
    at,
    changes: swap,
    credit,
    charge: rest.gt(0)
      ? { lines: prorationLines(newPlan, rest.toString(), sub.current_period_end), usesCoupon: false }
      : null,
  };
}

/** The instant to prorate from: `prorationDate` (a preview's, so the change matches it) or now. */
function prorationInstant(input: ChangePlanInput, now: Date): Date {
  const at = input.prorationDate;
  if (!at) return now;
  if (at.getTime() > now.getTime() || now.getTime() - at.getTime() > PRORATION_DATE_MAX_AGE_MS) {
    throw new AppError('invalid_request', 'prorationDate must be within the last hour', {
      details: [{ path: 'prorationDate', message: 'must be within the last hour, not in the future' }],
    });
  }
  return at;
}

/** Checks the new plan against the subscription and works out the change (reads only). */
async function loadPlanChange(db: Db, sub: SubscriptionRow, input: ChangePlanInput, now: Date): Promise<PlanChange> {
  if (input.newPlanId === sub.plan_id)
    throw new AppError('same_plan', 'The subscription is already on this plan', {
      details: [{ path: 'newPlanId', message: 'is the current plan' }],
    });
  const at = prorationInstant(input, now);
  const oldPlan = await requirePlan(db, sub.plan_id, 'planId');
  const newPlan = await requireUsablePlan(db, input.newPlanId, 'newPlanId');
  if (newPlan.currency !== oldPlan.currency) {
    throw new AppError(
      'currency_mismatch',
      `The new plan is in ${newPlan.currency}, the subscription in ${oldPlan.currency}`,
      { details: [{ path: 'newPlanId', message: 'has another currency' }] },
    );
  }
  const coupon = sub.coupon_id ? await findCoupon(db, sub.coupon_id) : null;
  return planChange(sub, oldPlan, newPlan, coupon, input.prorate, at);
}

export interface PlanChangePreview extends PlanChange {
  subscription: SubscriptionRow;
  /** The lines of the invoice the change issues: the charge's and the old plan's usage up to the change (U-10). */
  invoiceLines: LineInput[];
  /** That invoice as it would be priced (with the taxes it would carry); null when the change issues none. */
  chargeTotals: { subtotal: string; taxRate: string; taxAmount: string; total: string } | null;
}

/** What changing the plan now would do, for the console's preview page; writes nothing. */
export async function previewPlanChange(
  db: Db,
  id: string,
  input: ChangePlanInput,
  clock: Clock = {},
): Promise<PlanChangePreview> {
  const sub = assertLive(await getSubscription(db, id));
  const now = await nowForCustomer(db, sub.customer_id, clock.now);
  const change = await loadPlanChange(db, sub, input, now);
  const { charge } = await chargeWithUsage(db, sub, change);
  if (!charge) return { ...change, subscription: sub, invoiceLines: [], chargeTotals: null };
  const { totals, taxRate } = await priceNewInvoice(
    db,
    {
      customerId: sub.customer_id,
      currency: change.newPlan.currency,
      lineItems: charge.lines,
      planTaxRateIds: planTaxRateIds(change.newPlan),
    },
    { ...clock, now },
  );
  return {
    ...change,
    subscription: sub,
    invoiceLines: charge.lines,
    chargeTotals: {
      subtotal: totals.subtotal.toString(),
      taxRate,
      taxAmount: totals.taxAmount.toString(),
      total: totals.total.toString(),
    },
  };
}

/**
 * The change's charge with the old plan's usage up to the change on its invoice (U-10): an invoice of its own when
 * the change charges nothing else. `usage.record` keeps what was billed once the invoice exists.
 */
async function chargeWithUsage(db: Db, sub: SubscriptionRow, change: PlanChange) {
  const usage = await usageAtPlanChange(db, sub, change.oldPlan, change.at);
  const lines = usage.fit(change.charge?.lines ?? []);
  const charge = change.charge ? { ...change.charge, lines } : lines.length > 0 ? { lines, usesCoupon: false } : null;
  return { usage, charge };
}

/** Issues the charge a change planned; the subscription carries its new fields already. */
async function issueCharge(
  trx: Db,
  sub: SubscriptionRow,
  change: PlanChange,
  clock: Clock,
): Promise<{ subscription: SubscriptionRow; invoice: InvoiceDetail | null }> {
  const { charge, newPlan } = change;
  if (!charge) return { subscription: sub, invoice: null };
  if (charge.period) return issuePeriodInvoice(trx, sub, newPlan, charge.period, charge, clock);
  return { subscription: sub, invoice: await invoiceProration(trx, sub, newPlan, charge.lines, clock) };
}

/**
 * POST .../change-plan (D-45): carries out `planChange` under the subscription's lock, with its event and
 * one `subscription.change_plan` audit row whose `after` also names the credit and the charge's invoice.
 */
export async function changePlan(
  db: Db,
  id: string,
  input: ChangePlanInput,
  actor: Actor,
  clock: Clock = {},
): Promise<SubscriptionRow> {
  return inTransaction(db, async (trx) => {
    const sub = await lockLiveSubscription(trx, id);
    const now = await nowForCustomer(trx, sub.customer_id, clock.now);
    const change = await loadPlanChange(trx, sub, input, now);
    if (change.credit) {
      await addLedgerEntry(trx, {
        customer_id: sub.customer_id,
        currency: change.oldPlan.currency,
        amount: change.credit.amount,
        kind: 'proration',
        description: change.credit.description,
      });
    }
    // U-10: the old plan's usage up to the change goes on the change's invoice (one of its own when there is none).
    const { usage, charge } = await chargeWithUsage(trx, sub, change);
    const swapped = await updateSubscriptionRow(trx, id, change.changes);
    const { subscription: changed, invoice } = await issueCharge(
      trx,
      swapped,
      { ...change, charge },
      { ...clock, now },
    );
    if (invoice) await usage.record(trx, invoice.invoice.id);
    await recordEvents(trx, [subscriptionEvent('subscription.updated', changed)]);
    await recordAudits(trx, actor, [
      {
        action: 'subscription.change_plan',
        targetType: 'subscription',
        targetId: id,
        before: auditedSubscription(sub),
        after: {
          ...auditedSubscription(changed),
          prorationCredit: change.credit?.amount,
          chargeInvoiceId: invoice?.invoice.id,
        },
      },
    ]);
    return changed;
  });
}
