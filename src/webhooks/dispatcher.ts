import type { AppDeps } from '../app-deps.ts';
import { keyringOf } from '../crypto/envelope.ts';
import { serialiseEvent } from '../events/schema.ts';
import { type DeliveriesListener, listenForDueDeliveries } from './deliveries-listener.ts';
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  claimDueDeliveries,
  recordAttemptOutcomes,
} from './dispatch-repo.ts';
import { EndpointHealthBook } from './endpoint-health.ts';
import { attemptOutcome } from './retry-schedule.ts';
import { openEndpointSecret } from './secret-at-rest.ts';
import { closeWebhookConnections, DELIVERY_TIMEOUT_MS, postWebhook } from './send.ts';
import { signatureHeaders } from './sign.ts';

export interface DispatchLimits {
  /** Sends in flight at once in one process. */
  concurrency: number;
  /** Of those, to one endpoint that answers well; it starts at `startPerEndpoint` and doubles with each success. */
  perEndpoint: number;
  /** Sends to an endpoint this process has not heard back from yet. */
  startPerEndpoint: number;
  /** Sends to an endpoint whose last attempt failed (an error status, a reset, a timeout). */
  failingPerEndpoint: number;
  /** Slots all failing endpoints together may hold: the rest stay for endpoints that answer. */
  failingShare: number;
  /** How long a claim holds a delivery; a worker that dies mid-send leaves it due again after this. */
  leaseMs: number;
  /** The idle poll: picks up what no notification announced (another process's retries, a dead worker's claims). */
  pollMs: number;
  /** How stale this process's copy of the shared endpoint health may be when it claims. */
  healthRefreshMs: number;
}

export const DISPATCH_LIMITS: DispatchLimits = {
  concurrency: 32,
  perEndpoint: 16,
  // A hanging endpoint holds a slot until the send times out (5 s): it gets few, and failing ones share half the
  // slots, so receivers that hang cannot keep the healthy ones waiting for more than the first timeout.
  startPerEndpoint: 2,
  failingPerEndpoint: 1,
  failingShare: 16,
  // Well past a send (5 s at most) and the recording after it.
  leaseMs: 4 * DELIVERY_TIMEOUT_MS,
  pollMs: 1000,
  healthRefreshMs: 500,
};

/** Attempts recorded per statement. */
const RECORD_BATCH = 500;

/**
 * Delivers due webhook deliveries from one process. A claim takes as many due deliveries as there are free
 * send slots in one statement (per-endpoint caps applied, rows other workers hold skipped); each is sent at
 * once; finished attempts are recorded together in one statement while more sends go on. A claim runs
 * when a committed fan-out notifies, when a send finishes and more may be due, when a retry this process
 * scheduled comes due, and on an idle poll.
 */
export class DeliveryDispatcher {
  readonly #deps: AppDeps;
  readonly #limits: DispatchLimits;
  #inFlight = 0;
  readonly #perEndpoint = new Map<string, number>();
  readonly #health: EndpointHealthBook;
  readonly #sends = new Set<Promise<void>>();
  #claiming = false;
  #claimAgain = false;
  /** The last claim could not take everything due (slots or an endpoint's cap were full). */
  #moreDue = false;
  #stopped = false;
  readonly #toRecord: AttemptOutcome[] = [];
  #recording: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  /** When retries this process scheduled come due (ms). */
  #retriesAt: number[] = [];
  #listener: DeliveriesListener | undefined;

  constructor(deps: AppDeps, limits: DispatchLimits = DISPATCH_LIMITS) {
    this.#deps = deps;
    this.#limits = limits;
    this.#health = new EndpointHealthBook(limits);
  }

  start(): this {
    this.#listener = listenForDueDeliveries(this.#deps, () => this.wake(), 5 * this.#limits.pollMs);
    this.wake();
    return this;
  }

  /** Claims what is due now (coalesced: one claim at a time, one more after it when woken meanwhile). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#claimAgain = true;
      return;
    }
    void this.#claim();
  }

  /** Stops claiming, lets the sends in flight finish and records them. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#listener?.stop();
    while (this.#sends.size > 0) await Promise.all([...this.#sends]);
    await this.#recording;
    closeWebhookConnections();
  }

  async #claim(): Promise<void> {
    this.#claiming = true;
    try {
      do {
        this.#claimAgain = false;
        await this.#health.readShared(this.#deps.db);
        while (!this.#stopped) {
          const room = this.#limits.concurrency - this.#inFlight;
          if (room <= 0) {
            this.#moreDue = true;
            break;
          }
          const limits = this.#health.claimLimits(room, this.#perEndpoint);
          const claimed = await claimDueDeliveries(this.#deps.db, limits);
          const taken = new Map<string, number>();
          for (const delivery of claimed) {
            taken.set(delivery.endpoint_id, (taken.get(delivery.endpoint_id) ?? 0) + 1);
            if (delivery.enabled) this.#send(delivery);
          }
          // More may be due when the slots ran out or an endpoint's room did (left out, or filled by this claim):
          // then every finishing send claims again.
          const failingTaken = claimed.filter((d) => this.#health.isFailing(d.endpoint_id)).length;
          const capped =
            [...taken].some(([id, n]) => n >= (limits.room[id] ?? limits.defaultRoom)) ||
            (failingTaken > 0 && failingTaken >= limits.failingRoom);
          this.#moreDue = claimed.length === room || limits.full.length > 0 || capped;
          // An endpoint this claim filled is left out of the next, so the slots it could not take go elsewhere
          // at once rather than when one of its sends ends (which, for a hanging endpoint, is 5 s away).
          if (claimed.length === 0 || (claimed.length < room && !capped)) break;
        }
      } while (this.#claimAgain && !this.#stopped);
    } catch (err) {
      this.#deps.logger.error({ err }, 'claiming webhook deliveries failed');
    } finally {
      this.#claiming = false;
      this.#scheduleNext();
    }
  }

  #send(delivery: ClaimedDelivery): void {
    this.#inFlight++;
    this.#perEndpoint.set(delivery.endpoint_id, (this.#perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const sending = this.#attempt(delivery)
      .catch((err) => this.#deps.logger.error({ err, deliveryId: delivery.id }, 'webhook attempt failed'))
      .finally(() => {
        this.#inFlight--;
        const left = this.#perEndpoint.get(delivery.endpoint_id)! - 1;
        if (left > 0) this.#perEndpoint.set(delivery.endpoint_id, left);
        else this.#perEndpoint.delete(delivery.endpoint_id);
        this.#sends.delete(sending);
        if (this.#moreDue) this.wake();
      });
    this.#sends.add(sending);
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    const { config, logger } = this.#deps;
    const event = { id: delivery.event_id, type: delivery.event_type };
    // The body is serialised once per attempt and signed as those exact bytes.
    const body = JSON.stringify(
      serialiseEvent({ ...event, data: delivery.event_data, created_at: delivery.event_created_at }),
    );
    // Stored sealed (issue 33); a secret no key opens fails the attempt before sending, logged, and the lease retries.
    const keyring = keyringOf(config);
    const secret = await openEndpointSecret(keyring, delivery.secret, delivery.endpoint_id);
    const previous = delivery.previous_secret
      ? await openEndpointSecret(keyring, delivery.previous_secret, delivery.endpoint_id)
      : null;
    const headers = signatureHeaders(secret, event, body, Math.floor(Date.now() / 1000), previous);
    const sent = await postWebhook(delivery.url, body, headers, { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS });
    const outcome = attemptOutcome(config, delivery.id, delivery.attempt_count, sent);
    this.#health.learn(delivery.endpoint_id, sent.ok);
    logger.info(
      {
        deliveryId: delivery.id,
        eventId: delivery.event_id,
        attempt: outcome.attempt,
        statusCode: sent.statusCode,
        error: sent.error,
        outcome: outcome.status,
      },
      'webhook attempt',
    );
    if (outcome.next_attempt_at) this.#retryAt(outcome.next_attempt_at.getTime());
    this.#record(outcome);
  }

  #record(outcome: AttemptOutcome): void {
    this.#toRecord.push(outcome);
    this.#recording ??= this.#recordAll().finally(() => (this.#recording = undefined));
  }

  /** Records what finished, in batches, until nothing is left (attempts finishing meanwhile join the next batch). */
  async #recordAll(): Promise<void> {
    while (this.#toRecord.length > 0) {
      const batch = this.#toRecord.splice(0, RECORD_BATCH);
      const health = this.#health.takeToWrite();
      try {
        await recordAttemptOutcomes(this.#deps.db, batch, health);
      } catch (err) {
        // Health is advisory: what failed to be written is learned again from the next answers.
        // One bad row (a delivery deleted with its endpoint meanwhile) must not lose the others' records.
        for (const outcome of batch) {
          await recordAttemptOutcomes(this.#deps.db, [outcome]).catch((error) =>
            // Unrecorded, the delivery stays claimed until its lease ends and is then sent again (at least once).
            this.#deps.logger.error(
              { err: error, batchError: err, deliveryId: outcome.delivery_id },
              'recording a webhook attempt failed',
            ),
          );
        }
      } finally {
        this.#health.written(health);
      }
    }
  }

  #retryAt(at: number): void {
    this.#retriesAt.push(at);
    if (at < this.#timerAt) this.#setTimer(at);
  }

  /** The next claim without a wake-up: the earliest retry this process scheduled, else the idle poll. */
  #scheduleNext(): void {
    if (this.#stopped) return;
    const now = Date.now();
    this.#retriesAt = this.#retriesAt.filter((at) => at > now);
    this.#setTimer(this.#retriesAt.reduce((a, b) => Math.min(a, b), now + this.#limits.pollMs));
  }

  #setTimer(at: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timerAt = Infinity;
        this.wake();
      },
      Math.max(0, at - Date.now()),
    );
    this.#timer.unref();
  }
}

let current: DeliveryDispatcher | undefined;

/** Starts this process's dispatcher (the webhooks worker group's background work). */
export function startDeliveryDispatcher(deps: AppDeps, limits?: DispatchLimits): { stop(): Promise<void> } {
  const dispatcher = new DeliveryDispatcher(deps, limits).start();
  current = dispatcher;
  return {
    async stop() {
      await dispatcher.stop();
      if (current === dispatcher) current = undefined;
    },
  };
}

/** Wakes this process's dispatcher, if it runs one. */
export function wakeDeliveryDispatcher(): void {
  current?.wake();
}
