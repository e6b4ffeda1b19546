/**
 * The sweep's renewals (D-82): every subscription due, in batches claimed with FOR UPDATE SKIP LOCKED and
 * renewed set-wise by renewLockedSubscriptions, several batches in flight.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/knex.ts';
import { inHotLockTransaction } from '../db/hot-lock.ts';
import type { Clock } from '../invoices/issue.ts';
import { batchTurnSql, claimDueSubscriptions, type BatchTurn } from './renewal-repo.ts';
import {
  addResult,
  emptyResult,
  renewLockedSubscriptions,
  renewSubscription,
  type IssueOrder,
  type RenewalResult,
} from './renew.ts';
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
}

/** Subscriptions per batch and batches in flight when the caller does not say (docs/decisions.md, issue 20). */
export const RENEWAL_BATCH_SIZE = 500;
export const RENEWAL_CONCURRENCY = 3;

/**
 * A queue of turns: `join()` answers `turn`, which resolves when every earlier entrant has called its
 * `leave`. Batches join in the order they claim rows, so work done in turn happens in that order.
 */
function turnstile(): () => { turn: Promise<void>; leave: () => void } {
  let tail: Promise<void> = Promise.resolve();
  return () => {
    const turn = tail;
    let leave!: () => void;
    tail = new Promise<void>((resolve) => (leave = resolve));
    return { turn, leave };
  };
}

/**
 * Renews every subscription due by `asOf` in batches of `batchSize` (D-82): each batch claims its rows with
 * FOR UPDATE SKIP LOCKED, renews them set-wise and commits, so a sweep killed half-way leaves whole batches
 * done and the rest due, and two sweeps at once split the rows between them. When a batch fails as a
 * whole, its subscriptions are retried one by one so the failing one is found, logged and counted in
 * `errors` while the others renew; the sweep goes on.
 *
 * `concurrency` batches run at once, so one batch's reads and subscription writes overlap another's
 * invoice issuing. Claims are taken one at a time and invoices issued in claim order (the numbering lock
 * orders them anyway), so numbers and store credit follow the renewal order exactly as with one batch at a
 * time: a run resumed after a crash ends where an uninterrupted one does. A batch without store credit sends
 * its numbering statement as soon as it is written, and that statement waits in PostgreSQL for the batch
 * claimed before it to commit (renewal-repo.ts claimDueSubscriptions / batchTurnSql): it is received, parsed and
 * planned meanwhile, and the next numbers are taken the moment the last ones commit, with no round trip to
 * this process between. Should that batch roll back instead, this one fails too and is renewed one by one.
 */
export async function renewDueSubscriptions(db: Db, asOf: Date, options: RenewDueOptions = {}): Promise<SweepRenewals> {
  const { batchSize = RENEWAL_BATCH_SIZE, concurrency = RENEWAL_CONCURRENCY, clock = {}, logger, onBatch } = options;
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
  // The last batch claimed: the next one's numbering statement waits in PostgreSQL for its commit (renewal-repo.ts
  // claimDueSubscriptions).
  let lastTurn: { turn: BatchTurn; failed: boolean } | undefined;

  const loop = async () => {
    // The WAL flush of this loop's last committed batch, waited for before the sweep reports (hot-lock `flushed`).
    let flushed: Promise<void> = Promise.resolve();
    try {
      // Handled at once (Promise.all), so a failed flush is never an unhandled rejection; it fails the sweep at the
      // end.
      await renewBatches((wait) => (flushed = Promise.all([flushed, wait]).then(() => undefined)));
    } finally {
      await flushed;
    }
  };
  const renewBatches = async (onFlush: (wait: Promise<void>) => void) => {
    for (;;) {
      let claimed: string[] = [];
      let issueSlot: { turn: Promise<void>; leave: () => void } | undefined;
      let turn: { turn: BatchTurn; failed: boolean } | undefined;
      try {
        const batch = await inHotLockTransaction(
          db,
          async (trx, lock) => {
            const claimSlot = claimQueue();
            await claimSlot.turn;
            let subs: SubscriptionRow[];
            let before: BatchTurn | undefined;
            try {
              // With this batch's turn lock, for the next batch's statement to wait on; it waits on the last one's
              // (unless that one failed).
              const claim = await claimDueSubscriptions(trx, asOf, batchSize, [...skip]);
              subs = claim.subs;
              if (claim.turn) {
                before = lastTurn && !lastTurn.failed ? lastTurn.turn : undefined;
                lastTurn = turn = { turn: claim.turn, failed: false };
              }
              issueSlot = issueQueue();
            } finally {
              claimSlot.leave();
            }
            claimed = subs.map((s) => s.id);
            const slot = issueSlot;
            // The turn passes on once this batch's numbered write has committed (its flush is waited for after) and the
            // batches before passed it on.
            const order: IssueOrder = {
              turn: async (issue) => {
                await slot.turn;
                try {
                  return await issue();
                } finally {
                  slot.leave();
                }
              },
              ahead: async (issue) => {
                try {
                  return await issue(before && batchTurnSql(before));
                } finally {
                  await slot.turn;
                  slot.leave();
                }
              },
            };
            return renewLockedSubscriptions(trx, subs, asOf, clock, lock, order);
          },
          { flushed: onFlush },
        );
        issueSlot?.leave();
        if (claimed.length === 0) return;
        addResult(totals, batch);
        for (const id of batch.unchanged) skip.add(id);
        for (const { id, error } of batch.failures) fail(id, error);
      } catch (error) {
        // Rolled back: the next batch may issue now (a batch claimed from now on waits for none), while this one's
        // subscriptions are retried alone. A batch already waiting on this one's turn fails too and is retried alone.
        issueSlot?.leave();
        if (turn) turn.failed = true;
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
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, loop));
  return totals;
}
