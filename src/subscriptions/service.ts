import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { redeemCoupon } from '../coupons/service.ts';
import { assertCustomerExists } from '../customers/service.ts';
import { recordEvent } from '../events/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { Clock } from '../invoices/service.ts';
import { requirePlan } from '../plans/service.ts';
import { invoicePeriod } from './invoicing.ts';
import { boundary } from './periods.ts';
import { findSubscriptionRow, insertSubscriptionRow, listSubscriptionRows, lockSubscriptionRow, updateSubscriptionRow, type SubscriptionChanges, type SubscriptionRow } from './repo.ts';
import type { CreateSubscriptionInput, UpdateSubscriptionInput } from './schema.ts';
import { serialiseSubscription } from './schema.ts';

const DAY_MS = 86_400_000;

export async function recordSubscriptionEvent(trx: Db, type: 'subscription.created' | 'subscription.updated' | 'subscription.canceled', sub: SubscriptionRow): Promise<void> {
  await recordEvent(trx, type, serialiseSubscription(sub));
}

/**
 * D-41, D-42: without a trial the subscription is active, its first period starts now and is
 * invoiced at once (billing in advance); with trialDays it is trialing until trialEnd, uninvoiced.
 */
export async function createSubscription(db: Db, input: CreateSubscriptionInput, clock: Clock = {}): Promise<SubscriptionRow> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    await assertCustomerExists(trx, input.customerId);
    const plan = await requirePlan(trx, input.planId, 'planId');
    if (!plan.active) throw new AppError('plan_inactive', `Plan ${plan.id} is inactive`, { details: [{ path: 'planId', message: 'is inactive' }] });
    if (plan.billing_cycle !== input.billingCycle) {
      throw new AppError('billing_cycle_mismatch', `The plan bills ${plan.billing_cycle}, not ${input.billingCycle}`, { details: [{ path: 'billingCycle', message: `must be ${plan.billing_cycle}, the plan's cycle` }] });
    }
    const coupon = input.couponCode ? await redeemCoupon(trx, input.couponCode, plan.currency, now) : null;
    const trialDays = input.trialDays ?? 0;
    const trialEnd = trialDays > 0 ? new Date(now.getTime() + trialDays * DAY_MS) : null;
    let sub = await insertSubscriptionRow(trx, {
      customer_id: input.customerId,
      plan_id: plan.id,
      status: trialEnd ? 'trialing' : 'active',
      billing_cycle: plan.billing_cycle,
      // A trial is a stub before the anchor; billing periods start when it ends.
      billing_anchor: trialEnd ?? now,
      period_number: trialEnd ? -1 : 0,
      current_period_start: now,
      current_period_end: trialEnd ?? boundary(now, plan.billing_cycle, 1),
      trial_end: trialEnd,
      coupon_id: coupon?.id ?? null,
      created_at: now,
    });
    await recordSubscriptionEvent(trx, 'subscription.created', sub);
    if (!trialEnd) ({ subscription: sub } = await invoicePeriod(trx, sub, plan, { start: sub.current_period_start, end: sub.current_period_end }, { ...clock, now }));
    return sub;
  });
}

export function listSubscriptions(db: Db, page: PageQuery, filters: { customerId?: string; status?: string; planId?: string }) {
  return listSubscriptionRows(db, page, filters);
}

export async function getSubscription(db: Db, id: string): Promise<SubscriptionRow> {
  const row = await findSubscriptionRow(db, id);
  if (!row) throw notFound('Subscription');
  return row;
}

export async function lockLiveSubscription(trx: Db, id: string): Promise<SubscriptionRow> {
  const sub = await lockSubscriptionRow(trx, id);
  if (!sub) throw notFound('Subscription');
  if (sub.status === 'canceled') throw new AppError('subscription_canceled', 'A canceled subscription cannot change');
  return sub;
}

/** Starts billing periods afresh at `now` (a resume after the period ended, or a trial ended early) and invoices the first. */
export async function restartBilling(trx: Db, sub: SubscriptionRow, now: Date, clock: Clock, extra: SubscriptionChanges = {}): Promise<SubscriptionRow> {
  const plan = await requirePlan(trx, sub.plan_id, 'planId');
  const restarted = await updateSubscriptionRow(trx, sub.id, {
    ...extra,
    billing_anchor: now,
    period_number: 0,
    current_period_start: now,
    current_period_end: boundary(now, sub.billing_cycle, 1),
  });
  return (await invoicePeriod(trx, restarted, plan, { start: now, end: restarted.current_period_end }, { ...clock, now })).subscription;
}

/** The changes of PUT status 'active' (D-44): resume a pause, end a trial early, clear past_due. */
async function activate(trx: Db, sub: SubscriptionRow, now: Date, clock: Clock): Promise<SubscriptionRow> {
  if (sub.status === 'paused') {
    // A period that ended during the pause restarts at the resume time and is invoiced.
    if (sub.current_period_end.getTime() <= now.getTime()) return restartBilling(trx, sub, now, clock, { status: 'active', paused_at: null, trial_end: sub.trial_end && sub.trial_end > now ? now : sub.trial_end });
    const back = sub.trial_end && sub.trial_end.getTime() > now.getTime() ? 'trialing' : 'active';
    return updateSubscriptionRow(trx, sub.id, { status: back, paused_at: null });
  }
  if (sub.status === 'trialing') return restartBilling(trx, sub, now, clock, { status: 'active', trial_end: now });
  if (sub.status === 'past_due') return updateSubscriptionRow(trx, sub.id, { status: 'active' });
  return sub;
}

/** PUT /api/billing/subscriptions/:id (D-44). */
export async function updateSubscription(db: Db, id: string, input: UpdateSubscriptionInput, clock: Clock = {}): Promise<SubscriptionRow> {
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const before = await lockLiveSubscription(trx, id);
    let sub = before;
    if (input.status === 'canceled') {
      sub = await updateSubscriptionRow(trx, id, { status: 'canceled', canceled_at: now, cancel_at_period_end: false });
      await recordSubscriptionEvent(trx, 'subscription.canceled', sub);
      return sub;
    }
    if (input.status === 'paused' && sub.status !== 'paused') sub = await updateSubscriptionRow(trx, id, { status: 'paused', paused_at: now });
    if (input.status === 'active') sub = await activate(trx, sub, now, clock);
    if (input.cancelAtPeriodEnd !== undefined && input.cancelAtPeriodEnd !== sub.cancel_at_period_end) {
      sub = await updateSubscriptionRow(trx, id, { cancel_at_period_end: input.cancelAtPeriodEnd });
    }
    if (sub.status !== before.status || sub.cancel_at_period_end !== before.cancel_at_period_end) await recordSubscriptionEvent(trx, 'subscription.updated', sub);
    return sub;
  });
}
