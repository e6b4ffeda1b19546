/**
 * The sweep's renewals (D-82): every subscription due, in batches claimed with FOR UPDATE SKIP LOCKED and
 * renewed set-wise by renewLockedSubscriptions, several batches in flight.
 */
import type { Logger } from 'pino';
import type { CustomerScope } from '../db/clock-scope.ts';
import type { Db } from '../db/knex.ts';
import type { Clock } from '../invoices/issue.ts';
import { claimDueSubscriptions, type ClaimCursor } from './renewal-repo.ts';
import { renewLockedSubscriptions, renewSubscription, type IssueOrder } from './renew.ts';
import { addResult, emptyResult, type RenewalResult } from './renewal-plan.ts';
import type { SubscriptionRow } from './repo.ts';

export interface SweepRenewals extends RenewalResult {
  errors: number;
  batches: number;
}

export interface RenewDueOptions {
  batchSize?: number;
  /** Batches in flight at once within this sweep, each on its own connection and rows. */
  concurrency?: number;
  clock?: Clock;
  logger?: Logger;
  /** Called after every committed batch (the sweep's heartbeat). */
  onBatch?: () => Promise<void>;
  /** Whose subscriptions (issue 39): the daily sweep's customers unless a test clock's are named. */
  scope?: CustomerScope;
}

/** Subscriptions per batch and batches in flight when the caller does not say (docs/decisions.md, issue 20). */
export const RENEWAL_BATCH_SIZE = 500;
export const RENEWAL_CONCURRENCY = 3;

/**
 * A queue of turns: `join()` answers `turn`, which resolves when every earlier entrant has left. Batches join in the
 * order they claim rows, so work done in turn happens in that order. An entrant may leave before its turn came (a
 * batch with nothing to issue): the turn still passes on only once it came, so the order holds.
 */
function turnstile(): () => { turn: Promise<void>; leave: () => void } {
  let tail: Promise<void> = Promise.resolve();
  return () => {
    const turn = tail;
    let pass!: () => void;
    tail = new Promise<void>((resolve) => (pass = resolve));
    // `turn` never rejects; with a handler for both outcomes the derived promise never can either (Node 22 exits on
    // an unhandled rejection).
    return { turn, leave: () => void turn.then(pass, pass) };
  };
}

/**
 * Renews every subscription due by `asOf` in batches of `batchSize` (D-82): each batch is one transaction that claims
 * its rows with FOR UPDATE SKIP LOCKED, renews them set-wise and commits, so a sweep killed half-way leaves whole
 * batches done and the rest due, and two sweeps at once split the rows between them. When a batch fails as a whole,
 * its subscriptions are retried one by one so the failing one is found, logged and counted in `errors` while the
 * others renew; the sweep goes on.
 *
 * `concurrency` batches run at once, so one batch's reads and writes overlap another's invoice issuing. Claims are
 * taken one at a time and batches issue their invoices in claim order (a batch's turn passes on once it has its
 * numbers; the next one's numbering statement then waits for its commit on the year's counter), so numbers and
 * store credit follow the renewal order exactly as with one batch at a time: a run resumed after a crash ends where
 * an uninterrupted one does. (A batch that fails as a whole gives its numbers back to the batches after it; its
 * subscriptions, renewed one by one, take later ones.)
 *
 * A loop that fails (its claim or its heartbeat) fails the sweep, but only once every loop has stopped: the others
 * take no new batch after the failure, so nothing commits after the caller is told (issue 33).
 */
export async function renewDueSubscriptions(db: Db, asOf: Date, options: RenewDueOptions = {}): Promise<SweepRenewals> {
  const {
    batchSize = RENEWAL_BATCH_SIZE,
    concurrency = RENEWAL_CONCURRENCY,
    clock = {},
    logger,
    onBatch,
    scope,
  } = options;
  const totals: SweepRenewals = { ...emptyResult(), errors: 0, batches: 0 };
  // Subscriptions this sweep gave up on (failed) or found not due after all: never claimed again by it.
  const skip = new Set<string>();
  const fail = (id: string, error: unknown) => {
    // A concurrent batch may have claimed a failed row before this one recorded it: count it once.
    if (!skip.has(id)) totals.errors += 1;
    skip.add(id);
    logger?.error({ err: error, subscriptionId: id }, 'renewal failed; the sweep goes on');
  };
  const claimQueue = turnstile();
  const issueQueue = turnstile();
  // The first loop failure: the other loops finish the batch they hold and claim no more.
  let failure: { error: unknown } | undefined;
  // Where the last claim ended: the next starts after it instead of walking past the rows the batches in flight
  // hold. A claim that finds nothing after it starts over once from the beginning, for rows it passed because another
  // transaction held them then; the sweep ends when that finds nothing either.
  let cursor: ClaimCursor | undefined;
  const claim = async (trx: Db) => {
    let subs = await claimDueSubscriptions(trx, asOf, batchSize, [...skip], scope, cursor);
    if (subs.length === 0 && cursor) {
      cursor = undefined;
      subs = await claimDueSubscriptions(trx, asOf, batchSize, [...skip], scope);
    }
    const last = subs.at(-1);
    if (last) cursor = { periodEnd: last.current_period_end, id: last.id };
    return subs;
  };

  const loop = async () => {
    while (!failure) {
      let claimed: string[] = [];
      let issueSlot: { turn: Promise<void>; leave: () => void } | undefined;
      try {
        const batch = await db.transaction(async (trx) => {
          const claimSlot = claimQueue();
          await claimSlot.turn;
          let subs: SubscriptionRow[];
          try {
            subs = failure ? [] : await claim(trx);
            issueSlot = issueQueue();
          } finally {
            claimSlot.leave();
          }
          claimed = subs.map((s) => s.id);
          const slot = issueSlot;
          const order: IssueOrder = {
            turn: async (issue) => {
              await slot.turn;
              try {
                return await issue();
              } finally {
                slot.leave();
              }
            },
          };
          return renewLockedSubscriptions(trx, subs, asOf, clock, order);
        });
        issueSlot?.leave();
        if (claimed.length === 0) return;
        addResult(totals, batch);
        for (const id of batch.unchanged) skip.add(id);
        for (const { id, error } of batch.failures) fail(id, error);
      } catch (error) {
        // Rolled back: the next batch may issue now, while this one's subscriptions are retried alone.
        issueSlot?.leave();
        if (claimed.length === 0) throw error;
        logger?.warn(
          { err: error, subscriptions: claimed.length },
          'renewal batch failed; renewing its subscriptions one by one',
        );
        for (const id of claimed) {
          try {
            addResult(totals, await renewSubscription(db, id, asOf, clock));
          } catch (one) {
            fail(id, one);
          }
        }
      }
      totals.batches += 1;
      await onBatch?.();
    }
  };
  const stopOthers = (error: unknown) => {
    if (failure) logger?.error({ err: error }, 'another renewal loop failed too');
    else failure = { error };
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, () => loop().catch(stopOthers)));
  if (failure) {
    logger?.error({ ...totals }, 'renewals stopped after a loop failed; what they committed stands');
    throw failure.error;
  }
  return totals;
}
