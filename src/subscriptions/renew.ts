import { SYSTEM_ACTOR } from '../actor.ts';
import { recordAudits, type AuditEntry } from '../audit/service.ts';
import { findCoupons } from '../coupons/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { recordEvents, type NewEvent } from '../events/service.ts';
import { createInvoices, type Clock, type CreatedInvoice } from '../invoices/issue.ts';
import { findInvoicedPeriods, periodKey } from '../invoices/service.ts';
import { findPlans } from '../plans/service.ts';
import { updateRenewedSubscriptionRows } from './renewal-repo.ts';
import { addUsageToRenewals } from './usage-billing.ts';
import { lockSubscriptionRow, type SubscriptionRow } from './repo.ts';
import {
  emptyResult,
  addResult,
  planRenewal,
  NOTHING_INVOICED,
  type RenewalResult,
  type RenewalPlan,
} from './renewal-plan.ts';

/**
 * The order in which batches take their invoice numbers (the sweep's: claim order): `turn` runs `issue` once the
 * batches before it have taken theirs.
 */
export interface IssueOrder {
  turn<T>(issue: () => Promise<T>): Promise<T>;
}

/** A batch alone (renewSubscription): nothing to wait for. */
const UNORDERED: IssueOrder = { turn: (issue) => issue() };

export interface BatchRenewal extends RenewalResult {
  /** Subscriptions this batch could not renew (left unchanged), with why. */
  failures: { id: string; error: unknown }[];
  /** Subscriptions that did not move at all (nothing was due); a sweep need not claim them again. */
  unchanged: string[];
}

/**
 * Renews subscriptions the caller has locked, set-wise, in the caller's transaction: plans and coupons read in bulk,
 * periods computed here, the subscriptions updated by one statement and their audit rows written by another (they
 * name the invoices by the ids chosen in planRenewal, not by number); then, in the caller's order (`order`: the
 * sweep's batches take numbers in claim order), the invoices issued (invoices/issue.ts createInvoices, many rows)
 * and the events recorded, in the order of each renewal's steps. A subscription that cannot be planned (e.g. its
 * plan is gone) is left out and reported; a failing statement fails the whole batch (the caller's transaction rolls
 * back).
 */
export async function renewLockedSubscriptions(
  trx: Db,
  subs: SubscriptionRow[],
  asOf: Date,
  clock: Clock,
  order: IssueOrder = UNORDERED,
): Promise<BatchRenewal> {
  const out: BatchRenewal = { ...emptyResult(), failures: [], unchanged: [] };
  if (subs.length === 0) return out;
  // The renewal's own moment (a test clock's advance runs each at its moment): never the wall clock (issue 39).
  const now = clock.now ?? asOf;
  const [plans, coupons] = await Promise.all([
    findPlans(
      trx,
      subs.map((s) => s.plan_id),
    ),
    findCoupons(
      trx,
      subs.flatMap((s) => (s.coupon_id ? [s.coupon_id] : [])),
    ),
  ]);
  const planFor = (sub: SubscriptionRow) => {
    const plan = plans.get(sub.plan_id);
    if (!plan) throw new AppError('plan_not_found', `Plan ${sub.plan_id} of subscription ${sub.id} does not exist`);
    return plan;
  };
  const planOne = (sub: SubscriptionRow, invoiced: ReadonlySet<string>) => {
    try {
      return planRenewal(
        sub,
        planFor(sub),
        sub.coupon_id ? coupons.get(sub.coupon_id) : undefined,
        asOf,
        invoiced,
        now,
      );
    } catch (error) {
      return { id: sub.id, error };
    }
  };
  // Planned first as if nothing were invoiced; one query then says which of those periods exist already (a
  // sweep killed after committing some, or a concurrent path), and only their subscriptions are planned again.
  let planned = subs.map((sub) => planOne(sub, NOTHING_INVOICED));
  const candidates = planned.flatMap((p) =>
    'requests' in p
      ? p.requests.flatMap((r) => (r.period ? [{ subscriptionId: r.subscriptionId, periodStart: r.period.start }] : []))
      : [],
  );
  const invoiced = await findInvoicedPeriods(trx, candidates);
  if (invoiced.size > 0) {
    const stale = (p: (typeof planned)[number]) =>
      'requests' in p && p.requests.some((r) => r.period && invoiced.has(periodKey(r.subscriptionId, r.period.start)));
    planned = planned.map((p, i) => (stale(p) ? planOne(subs[i]!, invoiced) : p));
  }

  const renewals: RenewalPlan[] = [];
  for (const p of planned) {
    if (!('slots' in p)) out.failures.push(p);
    else if (!p.changed) out.unchanged.push(p.sub.id);
    else renewals.push(p);
  }
  if (renewals.length === 0) return out;
  // Usage in arrears (issue 35): lines added to these invoices, a final invoice for a cancellation with usage.
  const usage = await addUsageToRenewals(trx, renewals, plans, asOf);

  await updateRenewedSubscriptionRows(
    trx,
    renewals.map(({ sub }) => ({
      id: sub.id,
      status: sub.status,
      period_number: sub.period_number,
      current_period_start: sub.current_period_start,
      current_period_end: sub.current_period_end,
      cancel_at_period_end: sub.cancel_at_period_end,
      canceled_at: sub.canceled_at,
      coupon_cycles_used: sub.coupon_cycles_used,
      updated_at: sub.updated_at,
    })),
  );
  const started = new Map(subs.map((s) => [s.id, s]));
  // Renewals are only ever the service's own work (the sweep): recorded as `system`, set-wise (C-11).
  await recordAudits(
    trx,
    SYSTEM_ACTOR,
    renewals.map((r) => renewalAudit(started.get(r.sub.id)!, r)),
  );
  await usage.recordBillings(trx);
  const issued = await order.turn(() =>
    createInvoices(
      trx,
      renewals.flatMap((r) => r.requests),
      { ...clock, now: clock.now ?? asOf },
    ),
  );
  await recordEvents(trx, renewalEvents(renewals, issued));
  await usage.recordCredits(trx);
  for (const renewal of renewals) addResult(out, renewal.result);
  return out;
}

/**
 * The batch's events in the order of its renewals and their steps, each invoice's (invoice.created, any
 * invoice.paid) at its place.
 */
function renewalEvents(renewals: RenewalPlan[], issued: CreatedInvoice[]): NewEvent[] {
  const events: NewEvent[] = [];
  let offset = 0;
  for (const renewal of renewals) {
    for (const slot of renewal.slots) {
      if ('event' in slot) events.push(slot.event);
      else events.push(...issued[offset + slot.invoice]!.events);
    }
    offset += renewal.requests.length;
  }
  return events;
}

/** A subscription's fields that a renewal moves, as the audit log records them. */
function renewedFields(sub: SubscriptionRow): Record<string, unknown> {
  const {
    status,
    period_number,
    current_period_start,
    current_period_end,
    cancel_at_period_end,
    canceled_at,
    coupon_cycles_used,
  } = sub;
  return {
    status,
    period_number,
    current_period_start,
    current_period_end,
    cancel_at_period_end,
    canceled_at,
    coupon_cycles_used,
  };
}

/**
 * One renewal's audit entry: a scheduled cancellation taking effect, or periods advanced (a trial ending among them)
 * with the invoices issued.
 */
function renewalAudit(start: SubscriptionRow, renewal: RenewalPlan): AuditEntry {
  const invoiceIds = renewal.requests.map((r) => r.id);
  return {
    action: renewal.result.canceled > 0 ? 'subscription.cancel' : 'subscription.renew',
    targetType: 'subscription',
    targetId: start.id,
    before: renewedFields(start),
    after: { ...renewedFields(renewal.sub), ...(invoiceIds.length > 0 ? { invoice_ids: invoiceIds } : {}) },
  };
}

/**
 * Brings one subscription up to `asOf` (D-81): a batch of one over the sweep's code. Safe to run twice
 * and concurrently: the row lock orders the callers and periods already invoiced are not invoiced again (D-82).
 */
export async function renewSubscription(db: Db, id: string, asOf: Date, clock: Clock = {}): Promise<RenewalResult> {
  return inTransaction(db, async (trx) => {
    const sub = await lockSubscriptionRow(trx, id);
    if (!sub) return emptyResult();
    const { failures, unchanged: _unchanged, ...result } = await renewLockedSubscriptions(trx, [sub], asOf, clock);
    if (failures[0]) throw failures[0].error;
    return result;
  });
}
