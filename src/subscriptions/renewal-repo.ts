/** Set-wise SQL of renewals (the lifecycle sweep's batches): claims, bulk reads and one bulk update. */
import { randomInt } from 'node:crypto';
import { datesAsText } from '../db/json-dates.ts';
import type { Db } from '../db/knex.ts';
import { integerLiteral } from '../db/literal.ts';
import type { SubscriptionRow } from './repo.ts';

/** The statuses a renewal moves on; paused and canceled subscriptions are left alone (D-44). */
const RENEWABLE_STATUSES = ['active', 'trialing', 'past_due'] as const;

/**
 * The subscriptions a sweep claims once their period has ended: those it renews, and paused ones whose cancellation
 * is scheduled (D-44: canceled at period end, paused or not). The predicate of the index `subscriptions_due_order`
 * (migration 20261126120000), written the same way so the planner uses it.
 */
const RENEWABLE_LIST = RENEWABLE_STATUSES.map((status) => `'${status}'`).join(', ');
const DUE_CONDITION = `(s.status in (${RENEWABLE_LIST}) or (s.status = 'paused' and s.cancel_at_period_end))`;

/**
 * Locks up to `limit` subscriptions due (DUE_CONDITION) whose period ended by `asOf`, oldest period end first, skipping
 * rows another transaction holds (another sweep's batch, or a PUT on that subscription), so concurrent sweeps share the
 * work instead of queueing on it. `exclude` holds ids this sweep already gave up on. The same statement takes the
 * batch's turn lock (TURN_SQL) and answers it with the rows (undefined when nothing was claimed): a claim costs one
 * round trip, and a sweep's claims are taken one at a time.
 */
export async function claimDueSubscriptions(
  trx: Db,
  asOf: Date,
  limit: number,
  exclude: string[] = [],
): Promise<{ subs: SubscriptionRow[]; turn?: BatchTurn }> {
  const key = randomInt(2 ** 31 - 1);
  const { rows } = await trx.raw<{ rows: (SubscriptionRow & { turn_xid: string })[] }>(
    `with turn as materialized (${TURN_SQL})
     select s.*, turn.xid as turn_xid
       from subscriptions s cross join turn
      where ${DUE_CONDITION}
        and s.current_period_end <= ?${exclude.length > 0 ? ' and not (s.id = any(?::uuid[]))' : ''}
      order by s.current_period_end, s.id
      limit ?
      for update of s skip locked`,
    [key, asOf, ...(exclude.length > 0 ? [exclude] : []), limit],
  );
  if (rows.length === 0) return { subs: [] };
  return { subs: rows.map(({ turn_xid: _xid, ...sub }) => sub), turn: { key, xid: rows[0]!.turn_xid } };
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
    // a scan of every subscription; with the array it looks each one up by its primary key.
    [JSON.stringify(datesAsText(changes)), changes.map((c) => c.id)],
  );
}

/** A batch's place in the sweep's order of issuing: its advisory lock's key and its transaction's id. */
export interface BatchTurn {
  key: number;
  xid: string;
}

/**
 * A batch's turn lock (held until its transaction ends) with the transaction's id, for the next batch's numbering
 * statement to wait on (batchTurnSql; the function `renewal_batch_turn`, migration 20261125173000). Keys are random:
 * two sweeps' batches never share one (a clash would only make one wait).
 */
const TURN_SQL = `select pg_advisory_xact_lock(hashtext('renewal_batch_turn'), ?) as locked,
                         pg_current_xact_id()::text as xid`;

/**
 * SQL of a condition that waits until the batch `before` has committed (true), or fails the statement if it rolled
 * back.
 */
export function batchTurnSql(before: BatchTurn): string {
  if (!/^\d+$/.test(before.xid)) throw new Error(`not a transaction id: ${before.xid}`);
  return `renewal_batch_turn(${integerLiteral(before.key)}, '${before.xid}'::xid8)`;
}
