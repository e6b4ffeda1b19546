import { withSessionUser, type Actor } from '../audit/actor.ts';
import { recordAudit, type AuditEntry } from '../audit/service.ts';
import { redeemCoupon } from '../coupons/service.ts';
import { lockedBalancesPart } from '../credits/ledger.ts';
import { customerNotFound } from '../customers/service.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import { recordEvents } from '../events/service.ts';
import { createInvoiceLast, dueDateAt } from '../invoices/issue.ts';
import { settingsReadPart, type SettingOverrides } from '../settings/service.ts';
import type { Db } from '../db/knex.ts';
import { inHotLockTransaction, pooledHotLockTransaction, type HotLock, type PooledHotLock } from '../db/hot-lock.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../http/schemas.ts';
import type { Clock } from '../invoices/service.ts';
import { findPlan, planNotFound, planReadPart, requirePlan } from '../plans/service.ts';
import type { PlanRow } from '../plans/repo.ts';
import type { LineInput } from '../invoices/totals.ts';
import { invoicePeriod, periodInvoice, periodLines, type Period } from './invoicing.ts';
import { boundary } from './periods.ts';
import {
  findSubscriptionRow,
  insertSubscriptionOfPlan,
  insertSubscriptionRow,
  readSubscriptionOfPlan,
  subscriptionOfPlanStatement,
  SUBSCRIPTION_CUSTOMER_FK,
  listSubscriptionRows,
  lockSubscriptionRow,
  updateSubscriptionRow,
  type SubscriptionChanges,
  type SubscriptionInsert,
  type SubscriptionRow,
  type SubscriptionStatus,
} from './repo.ts';
import { serialiseSubscription, type CreateSubscriptionInput, type UpdateSubscriptionInput } from './schema.ts';
import { recordSubscriptionEvent, subscriptionEvent, transitionSubscription } from './transitions.ts';

const DAY_MS = 86_400_000;

/**
 * A subscription as the audit log records it (C-11): its API fields, so an entry reads like the API's
 * answers; only the fields an action changed are stored.
 */
export const auditedSubscription = (row: SubscriptionRow): Record<string, unknown> => serialiseSubscription(row);

/**
 * Refuses a plan a new subscription cannot have: unknown, inactive, or billing another cycle than the one asked for.
 */
function usablePlan(plan: PlanRow | undefined, input: CreateSubscriptionInput): PlanRow {
  if (!plan) throw planNotFound(input.planId, 'planId');
  if (!plan.active)
    throw new AppError('plan_inactive', `Plan ${plan.id} is inactive`, {
      details: [{ path: 'planId', message: 'is inactive' }],
    });
  if (plan.billing_cycle !== input.billingCycle) {
    throw new AppError('billing_cycle_mismatch', `The plan bills ${plan.billing_cycle}, not ${input.billingCycle}`, {
      details: [{ path: 'billingCycle', message: `must be ${plan.billing_cycle}, the plan's cycle` }],
    });
  }
  return plan;
}

interface Created {
  plan: PlanRow;
  sub: SubscriptionRow;
  /** The first period's lines; null for a trial (uninvoiced). */
  first: { lines: LineInput[]; usesCoupon: boolean } | null;
  /** The first invoice's tax rate and due date when read with the subscription (else issuing reads its settings). */
  issuing?: { taxRate: string; dueDate: Date };
}

type NewRow = Omit<SubscriptionInsert, 'plan_id' | 'coupon_id'>;
/** A creation whose first period is invoiced now. */
type Invoiced = Created & { first: NonNullable<Created['first']> };

/** The row of a new subscription and its first period (D-41, D-42); the plan is the caller's to check and add. */
function newSubscriptionRow(input: CreateSubscriptionInput, now: Date): { row: NewRow; period: Period } {
  const trialDays = input.trialDays ?? 0;
  const trialEnd = trialDays > 0 ? new Date(now.getTime() + trialDays * DAY_MS) : null;
  // The cycle asked for is the plan's, or nothing is written (usablePlan).
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
 * D-41, D-42: without a trial the subscription is active, its first period starts now and is
 * invoiced at once (billing in advance); with trialDays it is trialing until trialEnd, uninvoiced.
 *
 * Ordered for the year's invoice-number lock (invoices/issue.ts): the subscription (with its coupon cycle) is
 * written before the invoice takes its number; the invoice's last statement, sent with the COMMIT
 * (createInvoiceLast), writes the subscription's audit row and the events of both (subscription.created first).
 * The customer is checked by the subscription's foreign key, not by a read of its own.
 *
 * The common case, invoiced without a coupon, is two queries on a pooled connection (pooledHotLockTransaction):
 * the transaction's BEGIN with the subscription's statement and issuing's reads (createInvoicedOfPlan), then the
 * invoice's last statement with the COMMIT; concurrent ones of this process share one transaction (a group,
 * db/hot-lock-group.ts). A coupon or a trial takes knex's transaction as before.
 */
export async function createSubscription(
  db: Db,
  input: CreateSubscriptionInput,
  actor: Actor,
  clock: Clock = {},
): Promise<SubscriptionRow> {
  const now = clock.now ?? new Date();
  const { row, period } = newSubscriptionRow(input, now);
  const audit = (sub: SubscriptionRow): AuditEntry => ({
    action: 'subscription.create',
    targetType: 'subscription',
    targetId: sub.id,
    after: auditedSubscription(sub),
  });
  // A new subscription has no invoice yet: nothing to look up before issuing its first period's. That ends the
  // transaction with one statement that also writes the audit row and subscription.created (no round trip more).
  const issueFirst = async (trx: Db, lock: HotLock, { plan, sub, first, issuing }: Invoiced) => {
    await createInvoiceLast(
      trx,
      { ...periodInvoice(sub, plan, period, first.lines), ...issuing },
      { ...clock, now },
      lock,
      { eventsBefore: [subscriptionEvent('subscription.created', sub)], audit: { actor, entry: () => audit(sub) } },
    );
    return sub;
  };
  const created =
    !input.couponCode && !row.trial_end
      ? // Keyed by its customer: it reads and may spend that customer's store credit (db/hot-lock-group.ts).
        pooledHotLockTransaction(
          db,
          async (trx, lock) =>
            issueFirst(trx, lock, await createInvoicedOfPlan(trx, lock, input, row, period, clock.settings)),
          { key: input.customerId.toLowerCase() },
        )
      : inHotLockTransaction(db, async (trx, lock) => {
          const made = await (input.couponCode
            ? createWithCoupon(trx, input, input.couponCode, row, period, now)
            : createTrialOfPlan(trx, input, row));
          if (made.first) return issueFirst(trx, lock, made as Invoiced);
          // The session of a route checking it in its write was looked up before this transaction
          // (inHotLockTransaction).
          await recordAudit(trx, withSessionUser(actor, lock.sessionUser), audit(made.sub));
          await recordEvents(trx, [subscriptionEvent('subscription.created', made.sub)]);
          return made.sub;
        });
  return created.catch((error: unknown) => {
    throw isForeignKeyViolation(error, SUBSCRIPTION_CUSTOMER_FK) ? customerNotFound(input.customerId) : error;
  });
}

/**
 * Invoiced, without a coupon: the plan is read and checked by the statement that writes the subscription, and what
 * issuing its first invoice reads is sent with it in the transaction's first query: the settings (in the statement;
 * issuing reads none then) and the customer's ledger lock and balances (the lock taken by that statement once it
 * wrote, the balances read by one statement after it, for planCreditSpend). One round trip where there were four.
 */
async function createInvoicedOfPlan(
  trx: Db,
  lock: PooledHotLock,
  input: CreateSubscriptionInput,
  row: NewRow,
  period: Period,
  overrides: SettingOverrides | undefined,
): Promise<Invoiced> {
  const settings = settingsReadPart(['billing.default_tax_rate', 'billing.payment_terms_days'], overrides);
  const ledger = lockedBalancesPart(input.customerId);
  // The request's session, when the route checks it in its write (sessionInWrite), is checked by this statement too;
  // it takes the ledger lock when it wrote, and the balances are read by the next statement, after the lock.
  const [answer, balances] = await lock.runAll([
    subscriptionOfPlanStatement(
      { plan: planReadPart.sql, also: settings.sql, lockCustomer: ledger.lock },
      input.planId,
      row,
      lock.guard,
    ),
    ledger.read,
  ]);
  const written = readSubscriptionOfPlan(answer!);
  const plan = usablePlan(planReadPart.read(written?.answer), input);
  // A usable plan is written with: the statement's condition is usablePlan's.
  const sub = written!.created!;
  ledger.keep(trx, balances!);
  const values = settings.read(written!.answer.also as Record<string, unknown> | null);
  const issuing = {
    taxRate: values['billing.default_tax_rate'],
    dueDate: dueDateAt(period.start, values['billing.payment_terms_days']),
  };
  return { plan, sub, first: periodLines(plan, null, 0, period), issuing };
}

/**
 * A trial without a coupon: the plan read and checked by the statement that writes the subscription; nothing is
 * invoiced.
 */
async function createTrialOfPlan(trx: Db, input: CreateSubscriptionInput, row: NewRow): Promise<Created> {
  const written = await insertSubscriptionOfPlan(trx, { plan: planReadPart.sql }, input.planId, row);
  const plan = usablePlan(planReadPart.read(written?.answer), input);
  return { plan, sub: written!.created!, first: null };
}

/**
 * With a coupon: the plan first (the coupon is redeemed in its currency), and the first period priced before the
 * subscription exists, so it is stored with its coupon cycle spent.
 */
async function createWithCoupon(
  trx: Db,
  input: CreateSubscriptionInput,
  code: string,
  row: NewRow,
  period: Period,
  now: Date,
): Promise<Created> {
  const plan = usablePlan(await findPlan(trx, input.planId), input);
  const coupon = await redeemCoupon(trx, code, plan.currency, now);
  const first = row.trial_end ? null : periodLines(plan, coupon, 0, period);
  const sub = await insertSubscriptionRow(trx, {
    ...row,
    plan_id: plan.id,
    coupon_id: coupon.id,
    coupon_cycles_used: first?.usesCoupon ? 1 : 0,
  });
  return { plan, sub, first };
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
  await recordSubscriptionEvent(trx, 'subscription.updated', flagged);
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
  const now = clock.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const sub = await lockLiveSubscription(trx, id);
    const updated = await applyUpdate(trx, sub, input, now, clock);
    await recordAudit(trx, actor, {
      action: updateAction(sub, updated),
      targetType: 'subscription',
      targetId: id,
      before: auditedSubscription(sub),
      after: auditedSubscription(updated),
    });
    return updated;
  });
}
