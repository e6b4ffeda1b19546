/** Set-wise SQL of renewals (the lifecycle sweep's batches): claims, bulk reads and one bulk update. */
import { customerScopeSql, REAL_CUSTOMERS, type CustomerScope } from '../db/clock-scope.ts';
import { datesAsText } from '../db/json-dates.ts';
import type { Db } from '../db/knex.ts';
import type { SubscriptionRow } from './repo.ts';

/**
 * The subscriptions a sweep claims once their period has ended: those it renews (active, trialing, past_due), and
 * paused ones whose cancellation is scheduled (D-44: canceled at period end, paused or not); other paused and
 * canceled ones are left alone. The predicate of the index `subscriptions_due_order` (migration 20261126120000),
 * written the same way so the planner uses it.
 */

/** Where a sweep's previous claim ended, in the claims' order: the next one starts after it. */
export interface ClaimCursor {
  periodEnd: Date;
  id: string;
}

/**
 * Locks up to `limit` subscriptions due whose period ended by `asOf`, oldest period end first,
 * skipping rows another transaction holds (another sweep's batch, or a PUT on that subscription), so concurrent
 * sweeps share the work instead of queueing on it. `exclude` holds ids this sweep already gave up on; `after`, where
 * its previous claim ended, so a claim does not walk again past the rows its batches in flight hold.
 */
export async function claimDueSubscriptions(
  trx: Db,
  asOf: Date,
  limit: number,
  exclude: string[] = [],
  scope: CustomerScope = REAL_CUSTOMERS,
  after?: ClaimCursor,
): Promise<SubscriptionRow[]> {
  const inScope = customerScopeSql(scope, 's.customer_id');
  const { rows } = await trx.raw<{ rows: SubscriptionRow[] }>(
    `select s.*
       from subscriptions s
      where (s.status in ('active', 'trialing', 'past_due') or (s.status = 'paused' and s.cancel_at_period_end))
        and s.current_period_end <= ? and not (s.id = any(?::uuid[])) and ${inScope.sql}
        and (s.current_period_end, s.id) > (?::timestamptz, ?::uuid)
      order by s.current_period_end, s.id
      limit ?
      for update of s skip locked`,
    [
      asOf,
      exclude,
      ...inScope.bindings,
      after?.periodEnd ?? '-infinity',
      after?.id ?? '00000000-0000-0000-0000-000000000000',
      limit,
    ],
  );
  return rows;
}

/** The renewal's changes to many locked subscriptions in one statement. */
export type RenewalChange = Pick<
  SubscriptionRow,
  | 'id'
  | 'status'
  | 'period_number'
  | 'current_period_start'
  | 'current_period_end'
  | 'cancel_at_period_end'
  | 'canceled_at'
  | 'coupon_cycles_used'
  | 'updated_at'
>;

export async function updateRenewedSubscriptionRows(db: Db, changes: RenewalChange[]): Promise<void> {
  if (changes.length === 0) return;
  await db.raw(
    `update subscriptions s
        set status = v.status, period_number = v.period_number, current_period_start = v.current_period_start,
            current_period_end = v.current_period_end, cancel_at_period_end = v.cancel_at_period_end,
            canceled_at = v.canceled_at, coupon_cycles_used = v.coupon_cycles_used, updated_at = v.updated_at
       from jsonb_to_recordset(?::jsonb) as v(id uuid, status text, period_number integer,
              current_period_start timestamptz, current_period_end timestamptz, cancel_at_period_end boolean,
              canceled_at timestamptz, coupon_cycles_used integer, updated_at timestamptz)
      where s.id = v.id and s.id = any(?::uuid[])`,
    // The ids again as an array: the planner cannot size the JSON's rows (it guesses 100) and would hash-join them with
    // a
    // scan of every subscription; with the array it looks each one up by its primary key.
    [JSON.stringify(datesAsText(changes)), changes.map((c) => c.id)],
  );
}
