/**
 * Revenue metrics (console.md C-10, the Overview and GET /api/metrics/revenue), per currency, as of `at`.
 * MRR prices each subscription by the lines of its next invoice (pricing/plan-lines.ts periodLines:
 * the plan's price less a coupon still in force), normalised to a month and rounded to the currency per
 * subscription, then summed (C-18: the movements add up to the change exactly).
 */
import type { Decimal } from 'decimal.js';
import type { CouponRow } from '../coupons/repo.ts';
import { findCoupons } from '../coupons/service.ts';
import type { Db } from '../db/knex.ts';
import { lastEventAt } from '../events/service.ts';
import { amountDue } from '../pricing/amount-due.ts';
import { formatMoney, money } from '../money.ts';
import { roundToCurrency } from '../pricing/rounding.ts';
import { periodLines } from '../pricing/plan-lines.ts';
import { priceInvoice } from '../pricing/totals.ts';
import type { PlanRow } from '../plans/repo.ts';
import { findPlans } from '../plans/service.ts';
import { CYCLE_MONTHS } from '../plans/cycles.ts';
import type { SubscriptionStatus } from '../subscriptions/repo.ts';
import {
  collectedByMonth,
  mostOverdueInvoices,
  receivables,
  subscriptionStateChanges,
  subscriptionStateGroups,
  type StateChange,
  type StateGroup,
} from './repo.ts';

export const SERIES_MONTHS = 12;
export const MOST_OVERDUE = 10;

/** Statuses whose subscriptions count in MRR (C-10) and in the "active" figure. */
const BILLING: readonly (SubscriptionStatus | null)[] = ['active', 'past_due'];

export interface Movements {
  new: string;
  expansion: string;
  contraction: string;
  churn: string;
}

export interface MonthFigures {
  /** `YYYY-MM` (UTC). */
  month: string;
  /** MRR at the month's end (at `at` for the current month). */
  mrr: string;
  /** Payments less refunds in the month. */
  collected: string;
}

export interface CurrencyMetrics {
  currency: string;
  mrr: string;
  arr: string;
  activeSubscriptions: number;
  trialingSubscriptions: number;
  outstanding: string;
  overdueAmount: string;
  overdueCount: number;
  collectedThisMonth: string;
  movements: Movements;
  series: MonthFigures[];
}

export interface OverdueInvoice {
  id: string;
  number: string;
  customerId: string;
  customerName: string;
  currency: string;
  amountDue: string;
  dueDate: Date;
}

export interface RevenueMetrics {
  at: Date;
  currencies: CurrencyMetrics[];
  mostOverdue: OverdueInvoice[];
}

/** 00:00 UTC on the first day of the month `offset` months after `at`'s. */
const monthStart = (at: Date, offset = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
const monthKey = (d: Date) => d.toISOString().slice(0, 7);

/** What prices a subscription: its plan, and the coupon with the cycles it has used. */
interface Pricing {
  plan: PlanRow;
  coupon: CouponRow | undefined;
  cyclesUsed: number;
}

/**
 * A subscription's monthly contribution: its next invoice's lines (before tax) over the cycle's months, rounded to
 * the currency's minor unit (C-10, C-18) before anything is summed, so start + movements = end exactly.
 */
function monthlyContribution({ plan, coupon, cyclesUsed }: Pricing): Decimal {
  const period = { start: new Date(0), end: new Date(0) };
  const { lines } = periodLines(plan, coupon, cyclesUsed, period);
  const monthly = priceInvoice(lines, '0', plan.currency).subtotal.dividedBy(CYCLE_MONTHS[plan.billing_cycle]);
  return roundToCurrency(monthly, plan.currency);
}

/** Sums per currency of contributions already rounded (C-18). */
class CurrencySums {
  readonly sums = new Map<string, Decimal>();
  add(currency: string, amount: Decimal) {
    this.sums.set(currency, (this.sums.get(currency) ?? money(0)).plus(amount));
  }
  get(currency: string): string {
    return formatMoney(this.sums.get(currency) ?? money(0), currency);
  }
}

type PricingOf = (planId: string, couponId: string | null, cyclesUsed: number) => Pricing;

/** The plans and coupons the states name, read in two queries. */
async function catalog(db: Db, groups: StateGroup[], changes: StateChange[]): Promise<PricingOf> {
  const planIds = new Set(
    [...groups.map((g) => g.plan_id), ...changes.flatMap((c) => [c.plan_before, c.plan_after])].filter(
      (id): id is string => !!id,
    ),
  );
  const couponIds = new Set(
    [...groups.map((g) => g.coupon_id), ...changes.flatMap((c) => [c.coupon_before, c.coupon_after])].filter(
      (id): id is string => !!id,
    ),
  );
  const [plans, coupons] = await Promise.all([findPlans(db, [...planIds]), findCoupons(db, [...couponIds])]);
  return (planId, couponId, cyclesUsed) => {
    const plan = plans.get(planId);
    if (!plan) throw new Error(`Plan ${planId} of a subscription does not exist`);
    return { plan, coupon: couponId ? coupons.get(couponId) : undefined, cyclesUsed };
  };
}

/** Movements: each changed subscription's contribution at the month's start against at `at`. */
function movementsOf(changes: StateChange[], pricing: PricingOf) {
  const sums = {
    new: new CurrencySums(),
    expansion: new CurrencySums(),
    contraction: new CurrencySums(),
    churn: new CurrencySums(),
  };
  const contribution = (
    status: SubscriptionStatus | null,
    planId: string | null,
    couponId: string | null,
    cycles: number,
  ) => {
    if (!BILLING.includes(status) || !planId) return null;
    const p = pricing(planId, couponId, cycles);
    return { currency: p.plan.currency, amount: monthlyContribution(p) };
  };
  for (const c of changes) {
    const before = contribution(c.status_before, c.plan_before, c.coupon_before, c.cycles_before);
    const after = contribution(c.status_after, c.plan_after, c.coupon_after, c.cycles_after);
    const was = before?.amount.gt(0) ? before : null;
    const is = after?.amount.gt(0) ? after : null;
    if (was && is && was.currency === is.currency) {
      if (is.amount.gt(was.amount)) sums.expansion.add(is.currency, is.amount.minus(was.amount));
      if (is.amount.lt(was.amount)) sums.contraction.add(is.currency, was.amount.minus(is.amount));
      continue;
    }
    // A plan change across currencies leaves one currency and enters the other.
    if (was) sums.churn.add(was.currency, was.amount);
    if (is) sums.new.add(is.currency, is.amount);
  }
  return (currency: string): Movements => ({
    new: sums.new.get(currency),
    expansion: sums.expansion.get(currency),
    contraction: sums.contraction.get(currency),
    churn: sums.churn.get(currency),
  });
}

/**
 * The revenue figures as of `at` (default now; the API always answers now, tests pass a time). Past
 * states come from the event log (docs/decisions.md, "Overview"); money is from payments and refunds
 * dated in each calendar month (UTC).
 */
export async function revenueMetrics(db: Db, at: Date = new Date()): Promise<RevenueMetrics> {
  // Point k (1-based) is the end of series month k, the start of month k + 1; the last one is `at`.
  const points = [...Array.from({ length: SERIES_MONTHS - 1 }, (_, k) => monthStart(at, k - SERIES_MONTHS + 2)), at];
  const thisMonth = monthStart(at);
  const [groups, changes, open, collected, overdue] = await Promise.all([
    subscriptionStateGroups(db, points),
    subscriptionStateChanges(db, thisMonth, at),
    receivables(db),
    collectedByMonth(db, monthStart(at, 1 - SERIES_MONTHS), monthStart(at, 1)),
    mostOverdueInvoices(db, MOST_OVERDUE),
  ]);
  const pricing = await catalog(db, groups, changes);
  const movements = movementsOf(changes, pricing);

  const mrrAt = points.map(() => new CurrencySums());
  const counts = new Map<string, { active: number; trialing: number }>();
  for (const g of groups) {
    const p = pricing(g.plan_id, g.coupon_id, g.cycles_used);
    const currency = p.plan.currency;
    if (BILLING.includes(g.status)) mrrAt[g.point - 1]!.add(currency, monthlyContribution(p).times(g.count));
    if (g.point !== points.length) continue;
    const c = counts.get(currency) ?? { active: 0, trialing: 0 };
    if (BILLING.includes(g.status)) c.active += g.count;
    else c.trialing += g.count;
    counts.set(currency, c);
  }
  const collectedSums = new Map(collected.map((r) => [`${r.currency} ${r.month}`, r.amount]));
  const months = points.map((_, k) => monthKey(monthStart(at, k - SERIES_MONTHS + 1)));

  const currencies = new Set([
    ...counts.keys(),
    ...mrrAt.flatMap((s) => [...s.sums.keys()]),
    ...open.map((r) => r.currency),
    ...collected.map((r) => r.currency),
  ]);
  return {
    at,
    currencies: [...currencies].sort().map((currency) => {
      const mrr = mrrAt.at(-1)!.get(currency);
      const receivable = open.find((r) => r.currency === currency);
      const series = months.map((month, k) => ({
        month,
        mrr: mrrAt[k]!.get(currency),
        collected: formatMoney(collectedSums.get(`${currency} ${month}`) ?? '0', currency),
      }));
      return {
        currency,
        mrr,
        arr: formatMoney(money(mrr).times(12), currency),
        activeSubscriptions: counts.get(currency)?.active ?? 0,
        trialingSubscriptions: counts.get(currency)?.trialing ?? 0,
        outstanding: formatMoney(receivable?.outstanding ?? '0', currency),
        overdueAmount: formatMoney(receivable?.overdue_amount ?? '0', currency),
        overdueCount: receivable?.overdue_count ?? 0,
        collectedThisMonth: series.at(-1)!.collected,
        movements: movements(currency),
        series,
      };
    }),
    mostOverdue: overdue.map((row) => ({
      id: row.id,
      number: row.invoice_number,
      customerId: row.customer_id,
      customerName: row.customer_name,
      currency: row.currency,
      amountDue: formatMoney(amountDue(row), row.currency),
      dueDate: row.due_date,
    })),
  };
}

/** How long figures computed "now" are served again while nothing was recorded (bounds staleness anyway). */
const CACHE_MS = 60_000;
const cached = new WeakMap<object, { key: string; until: number; value: Promise<RevenueMetrics> }>();

/**
 * The figures as of now, for the overview and the API. The history behind them is rebuilt from the event log
 * (hundreds of ms with tens of thousands of subscription events), so an answer is kept per process and served
 * again while no event has been recorded since (every billing change records one) and the month is the same;
 * requests that arrive while it is computed wait for that one computation.
 */
export async function currentRevenueMetrics(db: Db): Promise<RevenueMetrics> {
  const now = new Date();
  const key = `${monthKey(now)} ${(await lastEventAt(db))?.toISOString() ?? '-'}`;
  const hit = cached.get(db);
  if (hit && hit.key === key && hit.until > now.getTime()) return hit.value;
  const value = revenueMetrics(db, now);
  cached.set(db, { key, until: now.getTime() + CACHE_MS, value });
  value.catch(() => {
    if (cached.get(db)?.value === value) cached.delete(db);
  });
  return value;
}
