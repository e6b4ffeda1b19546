/**
 * How many sends each endpoint may have in flight (D-70): a success doubles it up to a cap, a failure cuts it to
 * the minimum and marks the endpoint failing. One process's copy, shared with the other webhooks workers through
 * `webhook_endpoint_health` (issue 20: every worker caps an endpoint by the same health).
 */
import type { Db } from '../db/knex.ts';
import { type ClaimLimits, endpointHealthSince, type EndpointHealthState } from './dispatch-repo.ts';

/** The limits the health works within (the dispatcher's DispatchLimits). */
export interface HealthLimits {
  perEndpoint: number;
  startPerEndpoint: number;
  failingPerEndpoint: number;
  failingShare: number;
  leaseMs: number;
  healthRefreshMs: number;
}

/** Health rows are read again this far back: a row's time is taken before its transaction commits. */
const HEALTH_READ_OVERLAP_MS = 5000;

/** What this process knows of an endpoint from its last attempts. */
interface EndpointHealth {
  /** Sends it may have in flight. */
  allowed: number;
  failing: boolean;
}

export class EndpointHealthBook {
  readonly #limits: HealthLimits;
  readonly #health = new Map<string, EndpointHealth>();
  /** Endpoints whose health this process changed and has not written yet, and those being written. */
  readonly #toWrite = new Set<string>();
  readonly #writing = new Set<string>();
  /** When the shared health was last read, and the newest row time seen. */
  #readAt = 0;
  #seen = 0;

  constructor(limits: HealthLimits) {
    this.#limits = limits;
  }

  isFailing(endpointId: string): boolean {
    return this.#health.get(endpointId)?.failing ?? false;
  }

  /**
   * A success doubles what an endpoint may have in flight (up to perEndpoint); a failure cuts it to the minimum.
   * Applied here at once, and written with the next attempts' records for the other workers.
   */
  learn(endpointId: string, ok: boolean): void {
    const allowed =
      this.#health.get(endpointId)?.allowed ?? Math.min(this.#limits.startPerEndpoint, this.#limits.perEndpoint);
    this.#health.set(
      endpointId,
      ok
        ? { allowed: Math.min(this.#limits.perEndpoint, allowed * 2), failing: false }
        : { allowed: this.#limits.failingPerEndpoint, failing: true },
    );
    this.#toWrite.add(endpointId);
  }

  /**
   * Takes in what other workers wrote since the last read, at most every healthRefreshMs. An endpoint whose
   * health this process changed and has not written yet keeps its own, newer, view.
   */
  async readShared(db: Db): Promise<void> {
    if (Date.now() - this.#readAt < this.#limits.healthRefreshMs) return;
    this.#readAt = Date.now();
    const rows = await endpointHealthSince(db, new Date(this.#seen - HEALTH_READ_OVERLAP_MS));
    for (const row of rows) {
      this.#seen = Math.max(this.#seen, row.updated_at.getTime());
      if (this.#toWrite.has(row.endpoint_id) || this.#writing.has(row.endpoint_id)) continue;
      const allowed = Math.min(this.#limits.perEndpoint, Math.max(this.#limits.failingPerEndpoint, row.allowed));
      this.#health.set(row.endpoint_id, { allowed, failing: row.failing });
    }
  }

  /** The health this process changed since its last write, marked as being written until `written`. */
  takeToWrite(): EndpointHealthState[] {
    const states: EndpointHealthState[] = [];
    for (const id of this.#toWrite) {
      const health = this.#health.get(id);
      if (health) states.push({ endpoint_id: id, allowed: health.allowed, failing: health.failing });
      this.#writing.add(id);
    }
    this.#toWrite.clear();
    return states;
  }

  /** Written (or failed to be: health is advisory, and is learned again from the next answers). */
  written(states: EndpointHealthState[]): void {
    for (const state of states) this.#writing.delete(state.endpoint_id);
  }

  /** How the next claim may spread `room` free slots, from the sends in flight per endpoint and their health. */
  claimLimits(room: number, inFlight: ReadonlyMap<string, number>): ClaimLimits {
    const defaultRoom = Math.min(this.#limits.startPerEndpoint, this.#limits.perEndpoint);
    const failing = [...this.#health].filter(([, health]) => health.failing).map(([id]) => id);
    const failingInFlight = failing.reduce((sum, id) => sum + (inFlight.get(id) ?? 0), 0);
    const failingRoom = Math.max(0, this.#limits.failingShare - failingInFlight);
    const full: string[] = [];
    const endpointRoom: Record<string, number> = {};
    for (const id of new Set([...this.#health.keys(), ...inFlight.keys()])) {
      const health = this.#health.get(id);
      const left = (health?.allowed ?? defaultRoom) - (inFlight.get(id) ?? 0);
      if (left <= 0 || (health?.failing && failingRoom === 0)) full.push(id);
      else endpointRoom[id] = left;
    }
    return { limit: room, full, room: endpointRoom, defaultRoom, failing, failingRoom, leaseMs: this.#limits.leaseMs };
  }
}
