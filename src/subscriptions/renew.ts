import { newUuid } from '../crypto/ids.ts';
import { SYSTEM_ACTOR } from '../audit/actor.ts';
import { recordAudits, type AuditEntry } from '../audit/service.ts';
import type { CouponRow } from '../coupons/repo.ts';
import type { Db } from '../db/knex.ts';
import { inHotLockTransaction, type HotLock } from '../db/hot-lock.ts';
import { fanOutAhead, newEventIds } from '../events/service.ts';
import { AppError } from '../errors.ts';
import {
  numberInvoiceBatch,
  planInvoiceBatch,
  takesLedgerLocks,
  type BatchEvent,
  type Clock,
  type CreatedInvoice,
  type PendingEvent,
} from '../invoices/issue.ts';
import type { PlanRow } from '../plans/repo.ts';
import { periodInvoice, periodLines, type PeriodInvoiceRequest } from './invoicing.ts';
import { periodBounds } from './periods.ts';
import { findCoupons } from '../coupons/service.ts';
import { findPlans } from '../plans/service.ts';
import { findInvoicedPeriods, periodKey } from '../invoices/service.ts';
import { updateRenewedSubscriptionRows } from './renewal-repo.ts';
import { lockSubscriptionRow, type SubscriptionRow } from './repo.ts';
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
type Slot = { event: PendingEvent } | { invoice: number };

interface RenewalPlan {
  sub: SubscriptionRow;
  changed: boolean;
  slots: Slot[];
  requests: (PeriodInvoiceRequest & { id: string })[];
  result: RenewalResult;
}

const NOTHING_INVOICED: ReadonlySet<string> = new Set();

/**
 * Renewing one subscription up to `asOf`, computed without touching the database (D-81, D-44): ends a
 * finished trial, cancels at period end when scheduled (without a new invoice; a paused subscription too), and
 * advances every period that ended, invoicing each in advance unless `invoiced` says it already is. Otherwise paused
 * and canceled subscriptions stay as they are.
 */
function planRenewal(
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
    plan_.requests.push({ ...periodInvoice(sub, plan, bounds, lines), id: newUuid() });
    if (usesCoupon) sub = { ...sub, coupon_cycles_used: sub.coupon_cycles_used + 1 };
    plan_.result.invoicesCreated += 1;
  }
  plan_.sub = sub;
  return plan_;
}

/**
 * The order in which batches issue their invoices (the sweep's: claim order). `turn` runs `issue` once the batches
 * before have committed (Node waits); `ahead` runs it at once with `waitFor`, SQL of a condition its numbering
 * statement waits on in PostgreSQL until the batch before has committed, and passes the turn on after both.
 */
export interface IssueOrder {
  turn<T>(issue: () => Promise<T>): Promise<T>;
  ahead<T>(issue: (waitFor: string | undefined) => Promise<T>): Promise<T>;
}

/** A batch alone (renewSubscription): nothing to wait for. */
const UNORDERED: IssueOrder = { turn: (issue) => issue(), ahead: (issue) => issue(undefined) };

export interface BatchRenewal extends RenewalResult {
  /** Subscriptions this batch could not renew (left unchanged), with why. */
  failures: { id: string; error: unknown }[];
  /** Subscriptions that did not move at all (nothing was due); a sweep need not claim them again. */
  unchanged: string[];
}

/**
 * Renews subscriptions the caller has locked, set-wise, in the caller's hot-lock transaction (db/hot-lock.ts),
 * which this ENDS: plans and coupons read in bulk, periods computed here, the subscriptions updated by one
 * statement, their audit rows, the webhook deliveries of every event and the invoices' lines written before the
 * numbers are taken; then, in the caller's order (`order`: the sweep's batches take numbers in claim order), the
 * invoices numbered and written with their events by ONE last statement sent with the COMMIT
 * (invoices/issue.ts planInvoiceBatch / numberInvoiceBatch). Nothing may run on `trx` afterwards. A subscription
 * that cannot be planned (e.g. its plan is gone) is left out and reported; a failing statement fails the whole
 * batch (the caller's transaction rolls back).
 */
export async function renewLockedSubscriptions(
  trx: Db,
  subs: SubscriptionRow[],
  asOf: Date,
  clock: Clock,
  lock: HotLock,
  order: IssueOrder = UNORDERED,
): Promise<BatchRenewal> {
  const out: BatchRenewal = { ...emptyResult(), failures: [], unchanged: [] };
  if (subs.length === 0) return out;
  const now = new Date();
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
    'requests' in p ? p.requests.map((r) => ({ subscriptionId: r.subscriptionId, periodStart: r.period.start })) : [],
  );
  const invoiced = await findInvoicedPeriods(trx, candidates);
  if (invoiced.size > 0) {
    const stale = (p: (typeof planned)[number]) =>
      'requests' in p && p.requests.some((r) => invoiced.has(periodKey(r.subscriptionId, r.period.start)));
    planned = planned.map((p, i) => (stale(p) ? planOne(subs[i]!, invoiced) : p));
  }

  const renewals: RenewalPlan[] = [];
  for (const p of planned) {
    if (!('slots' in p)) out.failures.push(p);
    else if (!p.changed) out.unchanged.push(p.sub.id);
    else renewals.push(p);
  }
  if (renewals.length === 0) return out;

  // Everything that does not show an invoice number is written before the batch's turn to take numbers, so
  // concurrent batches overlap here: the subscriptions' new periods and their audit rows, which name the
  // invoices by the ids chosen in planRenewal (the lines follow in planInvoiceBatch).
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

  // Each slot's event is known by type now (an invoice's first is its invoice.created): their webhook deliveries
  // are written here too, and the events, which carry invoice numbers, under the lock with these ids.
  const aheadTypes = renewals.flatMap((r) =>
    r.slots.map((slot) => ('event' in slot ? slot.event.type : 'invoice.created')),
  );
  const ids = newEventIds(aheadTypes.length);
  await fanOutAhead(
    trx,
    aheadTypes.map((type, i) => ({ id: ids[i]!, type })),
  );

  const batch = await planInvoiceBatch(
    trx,
    renewals.flatMap((r) => r.requests),
    { ...clock, now: clock.now ?? asOf },
    (created) => renewalEvents(renewals, created, ids),
  );
  // A batch whose customers have no store credit is one statement: sent now, it is received, parsed and planned while
  // the batch before still works, and waits in PostgreSQL only for that batch's commit (no round trip to Node between
  // two batches' numbers). One that spends credit takes its customers' ledger locks first, only in its turn.
  if (takesLedgerLocks(batch)) await order.turn(() => numberInvoiceBatch(trx, batch, lock));
  else await order.ahead((waitFor) => numberInvoiceBatch(trx, batch, lock, waitFor));
  for (const renewal of renewals) addResult(out, renewal.result);
  return out;
}

/**
 * The batch's events in the order of its renewals and their slots: each invoice's invoice.created under the id its
 * deliveries were written with (`ids`, one per slot in order), then any invoice.paid (fanned out when recorded).
 */
function renewalEvents(renewals: RenewalPlan[], created: CreatedInvoice[], ids: string[]): BatchEvent[] {
  const events: BatchEvent[] = [];
  let offset = 0;
  let next = 0;
  for (const renewal of renewals) {
    for (const slot of renewal.slots) {
      if ('event' in slot) {
        events.push({ ...slot.event, id: ids[next++]! });
        continue;
      }
      const invoice = created[offset + slot.invoice]!;
      const [first, ...more] = invoice.events;
      if (first?.type !== 'invoice.created')
        throw new Error(`an issued invoice's first event is invoice.created, not ${first?.type}`);
      const invoiceId = invoice.detail.invoice.id;
      events.push({ ...first, id: ids[next++]!, invoiceId }, ...more.map((e) => ({ ...e, invoiceId })));
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
  return inHotLockTransaction(db, async (trx, lock) => {
    const sub = await lockSubscriptionRow(trx, id);
    if (!sub) return emptyResult();
    const {
      failures,
      unchanged: _unchanged,
      ...result
    } = await renewLockedSubscriptions(trx, [sub], asOf, clock, lock);
    if (failures[0]) throw failures[0].error;
    return result;
  });
}
