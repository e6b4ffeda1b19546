import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import { redeemCoupon } from '../coupons/service.ts';
import { customerNotFound } from '../customers/service.ts';
import { nowForCustomer } from '../customers/clock.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import { recordEvents } from '../events/service.ts';
import type { PageQuery } from '../db/paginate.ts';
import { createInvoices } from '../invoices/issue.ts';
import type { Clock } from '../invoices/service.ts';
import type { PlanRow } from '../plans/repo.ts';
import { requirePlan, requireUsablePlan } from '../plans/service.ts';
import { periodLines } from '../pricing/plan-lines.ts';
import type { Period } from '../pricing/proration.ts';
import { invoicePeriod, periodInvoice } from './invoicing.ts';
import { boundary } from './periods.ts';
import {
  customerPlanIdRows,
  findSubscriptionRow,
  insertSubscriptionRow,
  SUBSCRIPTION_CUSTOMER_FK,
  listSubscriptionRows,
  listSubscriptionRowsOfCustomers,
  lockSubscriptionRow,
  updateSubscriptionRow,
  type SubscriptionChanges,
  type SubscriptionInsert,
  type SubscriptionRow,
  type SubscriptionStatus,
  SUBSCRIPTION_SORTS,
} from './repo.ts';
import { serialiseSubscription, type CreateSubscriptionInput, type UpdateSubscriptionInput } from './schema.ts';
import { subscriptionEvent, transitionSubscription } from './transitions.ts';

const DAY_MS = 86_400_000;

/**
 * A subscription as the audit log records it (C-11): its API fields, so an entry reads like the API's
 * answers; only the fields an action changed are stored.
 */
export const auditedSubscription = (row: SubscriptionRow): Record<string, unknown> => serialiseSubscription(row);

/** The plan a new subscription names: usable (plans/), and billing the cycle the subscription asks for. */
async function planToSubscribe(trx: Db, input: CreateSubscriptionInput): Promise<PlanRow> {
  const plan = await requireUsablePlan(trx, input.planId, 'planId');
  if (plan.billing_cycle !== input.billingCycle) {
    throw new AppError('billing_cycle_mismatch', `The plan bills ${plan.billing_cycle}, not ${input.billingCycle}`, {
      details: [{ path: 'billingCycle', message: `must be ${plan.billing_cycle}, the plan's cycle` }],
    });
  }
  return plan;
}

type NewRow = Omit<SubscriptionInsert, 'plan_id' | 'coupon_id'>;

/** The row of a new subscription and its first period (D-41, D-42); the plan and coupon are the caller's to add. */
function newSubscriptionRow(input: CreateSubscriptionInput, now: Date): { row: NewRow; period: Period } {
  const trialDays = input.trialDays ?? 0;
  const trialEnd = trialDays > 0 ? new Date(now.getTime() + trialDays * DAY_MS) : null;
  const period = { start: now, end: trialEnd ?? boundary(now, input.billingCycle, 1) };
  const row = {
    customer_id: input.customerId,
    status: trialEnd ? 'trialing' : 'active',
    billing_cycle: input.billingCycle,
    // A trial is a stub before the anchor; billing periods start when it ends.
    billing_anchor: trialEnd ?? now,
    period_number: trialEnd ? -1 : 0,
    current_period_start: period.start,
    current_period_end: period.end,
    trial_end: trialEnd,
    created_at: now,
  } satisfies NewRow;
  return { row, period };
}

/**
 * D-41, D-42: without a trial the subscription is active, its first period starts now and is invoiced at once
 * (billing in advance); with trialDays it is trialing until trialEnd, uninvoiced. In one transaction: the plan
 * checked, the coupon redeemed (the first period is priced with it, so the subscription is stored with its coupon
 * cycle spent), the subscription inserted (its customer checked by the foreign key) with subscription.created and
 * its audit row, then the first invoice issued and its events recorded. The invoice comes last: its number is taken
 * as late as possible (invoices/issue.ts), and after it only what shows the number is written.
 */
export async function createSubscription(
  db: Db,
  input: CreateSubscriptionInput,
  actor: Actor,
  clock: Clock = {},
): Promise<SubscriptionRow> {
  const now = await nowForCustomer(db, input.customerId, clock.now); // TC-2: a clock's customer at its time
  const { row, period } = newSubscriptionRow(input, now);
  return inTransaction(db, async (trx) => {
    const plan = await planToSubscribe(trx, input);
    const coupon = input.couponCode ? await redeemCoupon(trx, input.couponCode, plan.currency, now) : null;
    const first = row.trial_end ? null : periodLines(plan, coupon, 0, period);
    const sub = await insertSubscriptionRow(trx, {
      ...row,
      plan_id: plan.id,
      coupon_id: coupon?.id ?? null,
      coupon_cycles_used: first?.usesCoupon ? 1 : 0,
    }).catch((error: unknown) => {
      throw isForeignKeyViolation(error, SUBSCRIPTION_CUSTOMER_FK) ? customerNotFound(input.customerId) : error;
    });
    await recordEvents(trx, [subscriptionEvent('subscription.created', sub)]);
    await recordAudits(trx, actor, [
      { action: 'subscription.create', targetType: 'subscription', targetId: sub.id, after: auditedSubscription(sub) },
    ]);
    if (first) {
      const [invoiced] = await createInvoices(trx, [periodInvoice(sub, plan, period, first.lines)], { ...clock, now });
      await recordEvents(trx, invoiced!.events);
    }
    return sub;
  });
}

export function listSubscriptions(
  db: Db,
  page: PageQuery,
  filters: { customerId?: string; status?: string; planId?: string },
) {
  return listSubscriptionRows(db, page, filters);
}

export async function getSubscription(db: Db, id: string): Promise<SubscriptionRow> {
  const row = await findSubscriptionRow(db, id);
  if (!row) throw notFound('Subscription');
  return row;
}

/** The subscription, unlocked; undefined when there is none. */
/** Every subscription of these customers, whatever its status (usage ingestion resolves events against them). */
export function subscriptionsOfCustomers(db: Db, customerIds: string[]): Promise<SubscriptionRow[]> {
  return listSubscriptionRowsOfCustomers(db, customerIds);
}

export function findSubscription(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return findSubscriptionRow(db, id);
}

/** The subscription locked for the rest of the caller's transaction; undefined when there is none. */
export function lockSubscription(trx: Db, id: string): Promise<SubscriptionRow | undefined> {
  return lockSubscriptionRow(trx, id);
}

/** Refuses a canceled subscription: canceled is final (interface.md). */
export function assertLive(sub: SubscriptionRow): SubscriptionRow {
  if (sub.status === 'canceled') throw new AppError('subscription_canceled', 'A canceled subscription cannot change');
  return sub;
}

export async function lockLiveSubscription(trx: Db, id: string): Promise<SubscriptionRow> {
  const sub = await lockSubscriptionRow(trx, id);
  if (!sub) throw notFound('Subscription');
  return assertLive(sub);
}

/** Billing periods started afresh at `now`: period 0 of a new anchor. */
export function freshPeriod(
  now: Date,
  cycle: SubscriptionRow['billing_cycle'],
): SubscriptionChanges & { current_period_start: Date; current_period_end: Date } {
  return {
    billing_anchor: now,
    period_number: 0,
    current_period_start: now,
    current_period_end: boundary(now, cycle, 1),
  };
}

/**
 * Starts billing periods afresh at `now` (a resume after the period ended, a trial ended early, a new
 * billing cycle) and invoices the first; `move` changes the status in the same write, through the state machine.
 */
export async function restartBilling(
  trx: Db,
  sub: SubscriptionRow,
  now: Date,
  clock: Clock,
  move?: { to: SubscriptionStatus; extra?: SubscriptionChanges },
): Promise<SubscriptionRow> {
  const plan = await requirePlan(trx, sub.plan_id, 'planId');
  const period = freshPeriod(now, sub.billing_cycle);
  const restarted = move
    ? await transitionSubscription(trx, sub, move.to, now, { ...move.extra, ...period })
    : await updateSubscriptionRow(trx, sub.id, period);
  return (
    await invoicePeriod(trx, restarted, plan, { start: now, end: restarted.current_period_end }, { ...clock, now })
  ).subscription;
}

/**
 * PUT status 'active' (D-44): resume a pause, end a trial early, clear past_due; `extra` are the other
 * changes of the same PUT. Answers undefined when the subscription is active already.
 */
async function activate(
  trx: Db,
  sub: SubscriptionRow,
  now: Date,
  clock: Clock,
  extra: SubscriptionChanges,
): Promise<SubscriptionRow | undefined> {
  if (sub.status === 'paused') {
    // A period that ended during the pause restarts at the resume time and is invoiced.
    const trialEnd = sub.trial_end && sub.trial_end > now ? now : sub.trial_end;
    if (sub.current_period_end.getTime() <= now.getTime())
      return restartBilling(trx, sub, now, clock, { to: 'active', extra: { ...extra, trial_end: trialEnd } });
    return transitionSubscription(
      trx,
      sub,
      sub.trial_end && sub.trial_end.getTime() > now.getTime() ? 'trialing' : 'active',
      now,
      extra,
    );
  }
  if (sub.status === 'trialing')
    return restartBilling(trx, sub, now, clock, { to: 'active', extra: { ...extra, trial_end: now } });
  if (sub.status === 'past_due') return transitionSubscription(trx, sub, 'active', now, extra);
  return undefined;
}

/**
 * The audit action of a PUT (C-11), named after what it did: one status move or the flag alone has its own
 * verb; a status move and a flag change in one PUT, or a PUT that changed nothing, is `subscription.update`.
 */
function updateAction(before: SubscriptionRow, after: SubscriptionRow): string {
  const moved = before.status !== after.status;
  const flagged = before.cancel_at_period_end !== after.cancel_at_period_end;
  // Canceling clears the flag as part of the move (transitions.ts): still one cancel.
  if (after.status === 'canceled') return 'subscription.cancel';
  if (moved && flagged) return 'subscription.update';
  if (moved)
    return after.status === 'paused'
      ? 'subscription.pause'
      : before.status === 'paused'
        ? 'subscription.resume'
        : 'subscription.activate';
  return flagged ? 'subscription.cancel_at_period_end' : 'subscription.update';
}

/** The move (and flag) of a PUT, without its audit row. */
async function applyUpdate(
  trx: Db,
  sub: SubscriptionRow,
  input: UpdateSubscriptionInput,
  now: Date,
  clock: Clock,
): Promise<SubscriptionRow> {
  if (input.status === 'canceled') return transitionSubscription(trx, sub, 'canceled', now);
  const flag: SubscriptionChanges =
    input.cancelAtPeriodEnd !== undefined && input.cancelAtPeriodEnd !== sub.cancel_at_period_end
      ? { cancel_at_period_end: input.cancelAtPeriodEnd }
      : {};
  if (input.status === 'paused' && sub.status !== 'paused')
    return transitionSubscription(trx, sub, 'paused', now, flag);
  const activated = input.status === 'active' ? await activate(trx, sub, now, clock, flag) : undefined;
  if (activated) return activated;
  if (flag.cancel_at_period_end === undefined) return sub;
  const flagged = await updateSubscriptionRow(trx, sub.id, flag);
  await recordEvents(trx, [subscriptionEvent('subscription.updated', flagged)]);
  return flagged;
}

/**
 * PUT /api/billing/subscriptions/:id (D-44): one status move and the cancel-at-period-end flag, one event
 * and one audit row. A PUT that changes nothing (the status it has already) records no event, but it is an
 * accepted admin action and leaves its audit row, with no changed field (C-11: one row per accepted write).
 */
export async function updateSubscription(
  db: Db,
  id: string,
  input: UpdateSubscriptionInput,
  actor: Actor,
  clock: Clock = {},
): Promise<SubscriptionRow> {
  return inTransaction(db, async (trx) => {
    const sub = await lockLiveSubscription(trx, id);
    const now = await nowForCustomer(trx, sub.customer_id, clock.now);
    const updated = await applyUpdate(trx, sub, input, now, clock);
    await recordAudits(trx, actor, [
      {
        action: updateAction(sub, updated),
        targetType: 'subscription',
        targetId: id,
        before: auditedSubscription(sub),
        after: auditedSubscription(updated),
      },
    ]);
    return updated;
  });
}

/** The plans the customer has subscribed to, in any status (C-14: their currencies). */
export function planIdsOfCustomer(db: Db, customerId: string): Promise<string[]> {
  return customerPlanIdRows(db, customerId);
}

export const SUBSCRIPTION_SORT_KEYS: readonly string[] = Object.keys(SUBSCRIPTION_SORTS); // the list's sorts, C-15
