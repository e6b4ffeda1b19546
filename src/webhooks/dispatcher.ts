import type { Knex } from 'knex';
import pg from 'pg';
import type { AppDeps } from '../app-deps.ts';
import { serialiseEvent } from '../events/schema.ts';
import type { Config } from '../config.ts';
import { nextAttemptDelayMs, parseRetryAfter, retrySchedule } from './retry-schedule.ts';
import {
  claimDueDeliveries,
  DELIVERIES_DUE_CHANNEL,
  endpointHealthSince,
  recordAttemptOutcomes,
  type AttemptOutcome,
  type ClaimedDelivery,
  type ClaimLimits,
  type EndpointHealthState,
} from './repo.ts';
import { closeWebhookConnections, DELIVERY_TIMEOUT_MS, postWebhook, type SendOutcome } from './send.ts';
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

/** Health rows are read again this far back: a row's time is taken before its transaction commits. */
const HEALTH_READ_OVERLAP_MS = 5000;

/**
 * Where one attempt leaves its delivery (D-72): a 2xx delivers it; anything else schedules the next attempt
 * after the schedule's delay for this attempt (a longer Retry-After wins), or fails it when the schedule is
 * spent. `attemptsBefore` is the delivery's attempt count when the send started.
 */
export function attemptOutcome(
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE_SECONDS'>,
  deliveryId: string,
  attemptsBefore: number,
  sent: SendOutcome,
  now = Date.now(),
): AttemptOutcome {
  const attempt = attemptsBefore + 1;
  const logged = {
    delivery_id: deliveryId,
    attempt,
    status_code: sent.statusCode,
    latency_ms: sent.latencyMs,
    error: sent.error,
    response_body: sent.responseBody,
  };
  if (sent.ok) return { ...logged, status: 'delivered', next_attempt_at: null };
  const delayMs = nextAttemptDelayMs(retrySchedule(config), attempt, parseRetryAfter(sent.retryAfter, now));
  if (delayMs === null) return { ...logged, status: 'failed', next_attempt_at: null };
  return { ...logged, status: 'pending', next_attempt_at: new Date(now + delayMs) };
}

/** Attempts recorded per statement. */
const RECORD_BATCH = 500;

/** What the webhooks workers learned of an endpoint from its last attempts (this process's copy). */
interface EndpointHealth {
  /** Sends it may have in flight. */
  allowed: number;
  failing: boolean;
}

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
  readonly #health = new Map<string, EndpointHealth>();
  /** Endpoints whose health this process changed and has not written yet, and those being written. */
  readonly #healthToWrite = new Set<string>();
  readonly #healthWriting = new Set<string>();
  /** When the shared health was last read, and the newest row time seen. */
  #healthReadAt = 0;
  #healthSeen = 0;
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
  #listener: pg.Client | undefined;
  #listenTimer: NodeJS.Timeout | undefined;

  constructor(deps: AppDeps, limits: DispatchLimits = DISPATCH_LIMITS) {
    this.#deps = deps;
    this.#limits = limits;
  }

  start(): this {
    void this.#listen();
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
    clearTimeout(this.#listenTimer);
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.end().catch(() => undefined);
    while (this.#sends.size > 0) await Promise.all([...this.#sends]);
    await this.#recording;
    closeWebhookConnections();
  }

  async #claim(): Promise<void> {
    this.#claiming = true;
    try {
      do {
        this.#claimAgain = false;
        await this.#readSharedHealth();
        while (!this.#stopped) {
          const room = this.#limits.concurrency - this.#inFlight;
          if (room <= 0) {
            this.#moreDue = true;
            break;
          }
          const limits = this.#claimLimits(room);
          const claimed = await claimDueDeliveries(this.#deps.db, limits);
          const taken = new Map<string, number>();
          for (const delivery of claimed) {
            taken.set(delivery.endpoint_id, (taken.get(delivery.endpoint_id) ?? 0) + 1);
            if (delivery.enabled) this.#send(delivery);
          }
          // More may be due when the slots ran out or an endpoint's room did (left out, or filled by this claim):
          // then every finishing send claims again.
          const failingTaken = claimed.filter((d) => this.#health.get(d.endpoint_id)?.failing).length;
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

  /** How the next claim may spread `room` free slots, from the sends in flight and each endpoint's health. */
  #claimLimits(room: number): ClaimLimits {
    const defaultRoom = Math.min(this.#limits.startPerEndpoint, this.#limits.perEndpoint);
    const failing = [...this.#health].filter(([, health]) => health.failing).map(([id]) => id);
    const failingInFlight = failing.reduce((sum, id) => sum + (this.#perEndpoint.get(id) ?? 0), 0);
    const failingRoom = Math.max(0, this.#limits.failingShare - failingInFlight);
    const full: string[] = [];
    const endpointRoom: Record<string, number> = {};
    for (const id of new Set([...this.#health.keys(), ...this.#perEndpoint.keys()])) {
      const health = this.#health.get(id);
      const left = (health?.allowed ?? defaultRoom) - (this.#perEndpoint.get(id) ?? 0);
      if (left <= 0 || (health?.failing && failingRoom === 0)) full.push(id);
      else endpointRoom[id] = left;
    }
    return { limit: room, full, room: endpointRoom, defaultRoom, failing, failingRoom, leaseMs: this.#limits.leaseMs };
  }

  /**
   * A success doubles what an endpoint may have in flight (up to perEndpoint); a failure cuts it to the minimum.
   * Applied here at once, and written with the next attempts' records for the other workers.
   */
  #learn(endpointId: string, ok: boolean): void {
    const allowed =
      this.#health.get(endpointId)?.allowed ?? Math.min(this.#limits.startPerEndpoint, this.#limits.perEndpoint);
    this.#health.set(
      endpointId,
      ok
        ? { allowed: Math.min(this.#limits.perEndpoint, allowed * 2), failing: false }
        : { allowed: this.#limits.failingPerEndpoint, failing: true },
    );
    this.#healthToWrite.add(endpointId);
  }

  /**
   * Takes in what other workers wrote of endpoint health since the last read, at most every healthRefreshMs
   * (issue 20: every webhooks worker caps an endpoint by the same health). An endpoint whose health this
   * process changed and has not written yet keeps its own, newer, view.
   */
  async #readSharedHealth(): Promise<void> {
    if (Date.now() - this.#healthReadAt < this.#limits.healthRefreshMs) return;
    this.#healthReadAt = Date.now();
    const rows = await endpointHealthSince(this.#deps.db, new Date(this.#healthSeen - HEALTH_READ_OVERLAP_MS));
    for (const row of rows) {
      this.#healthSeen = Math.max(this.#healthSeen, row.updated_at.getTime());
      if (this.#healthToWrite.has(row.endpoint_id) || this.#healthWriting.has(row.endpoint_id)) continue;
      const allowed = Math.min(this.#limits.perEndpoint, Math.max(this.#limits.failingPerEndpoint, row.allowed));
      this.#health.set(row.endpoint_id, { allowed, failing: row.failing });
    }
  }

  /** The health this process changed since its last write, marked as being written. */
  #takeHealthToWrite(): EndpointHealthState[] {
    const states: EndpointHealthState[] = [];
    for (const id of this.#healthToWrite) {
      const health = this.#health.get(id);
      if (health) states.push({ endpoint_id: id, allowed: health.allowed, failing: health.failing });
      this.#healthWriting.add(id);
    }
    this.#healthToWrite.clear();
    return states;
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
    const headers = signatureHeaders(
      delivery.secret,
      event,
      body,
      Math.floor(Date.now() / 1000),
      delivery.previous_secret,
    );
    const sent = await postWebhook(delivery.url, body, headers, { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS });
    const outcome = attemptOutcome(config, delivery.id, delivery.attempt_count, sent);
    this.#learn(delivery.endpoint_id, sent.ok);
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
      const health = this.#takeHealthToWrite();
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
        for (const state of health) this.#healthWriting.delete(state.endpoint_id);
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

  /**
   * LISTENs for committed fan-outs on a connection of its own; reconnects after losing it (the poll covers the gap).
   */
  async #listen(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client(connectionSettings(this.#deps.db, this.#deps.config.DATABASE_SESSION_URL));
    let lost = false;
    const retry = (err: unknown) => {
      if (lost) return;
      lost = true;
      if (this.#listener === client) this.#listener = undefined;
      client.end().catch(() => undefined);
      if (this.#stopped) return;
      this.#deps.logger.warn({ err }, 'webhook deliveries listener lost; reconnecting');
      this.#listenTimer = setTimeout(() => void this.#listen(), 5 * this.#limits.pollMs);
      this.#listenTimer.unref();
    };
    client.on('error', retry);
    client.on('end', () => retry(new Error('connection ended')));
    client.on('notification', () => this.wake());
    try {
      await client.connect();
      await client.query(`listen ${DELIVERIES_DUE_CHANNEL}`);
      if (this.#stopped) await client.end();
      else this.#listener = client;
    } catch (err) {
      retry(err);
    }
  }
}

/** LISTEN needs a session of its own: DATABASE_SESSION_URL when the pool's URL is a transaction-mode pooler. */
function connectionSettings(db: Knex, sessionUrl: string | undefined): pg.ClientConfig {
  if (sessionUrl) return { connectionString: sessionUrl, application_name: 'billing-webhooks-listen' };
  const connection = (db.client as { config: Knex.Config }).config.connection;
  const settings =
    typeof connection === 'string' ? { connectionString: connection } : { ...(connection as pg.ClientConfig) };
  return { ...settings, application_name: 'billing-webhooks-listen' };
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
