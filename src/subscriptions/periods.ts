/**
 * Billing period arithmetic (D-43), UTC throughout. Every period boundary is computed from the
 * subscription's anchor (anchor + n cycles), never from the previous boundary, so a Jan 31 anchor
 * gives Feb 28/29, Mar 31, Apr 30 — a clamped day never drags later periods earlier.
 */
import { CYCLE_MONTHS, type BillingCycle } from '../plans/cycles.ts';

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/** `anchor` + `months` calendar months, the day clamped to the target month's last day, time of day kept. */
export function addMonthsClamped(anchor: Date, months: number): Date {
  const totalMonths = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The `n`th boundary after the anchor (n = 0 is the anchor itself). */
export function boundary(anchor: Date, cycle: BillingCycle, n: number): Date {
  return addMonthsClamped(anchor, CYCLE_MONTHS[cycle] * n);
}

/** Period `n` (0-based) of a subscription anchored at `anchor`: [start, end). */
export function periodBounds(anchor: Date, cycle: BillingCycle, n: number): { start: Date; end: Date } {
  return { start: boundary(anchor, cycle, n), end: boundary(anchor, cycle, n + 1) };
}

/** U-8: a period the trial covers (the trial ends at or after the period's end) bills its usage at 0. */
export const trialCovers = (trialEnd: Date | null, periodEnd: Date) =>
  trialEnd !== null && trialEnd.getTime() >= periodEnd.getTime();
