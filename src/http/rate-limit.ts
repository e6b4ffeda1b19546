import type { Db } from '../db/knex.ts';
import { AppError } from '../errors.ts';
import { deleteEndedWindows, leaseTokens } from './rate-limit-repo.ts';

/** What this process holds of one key's current shared window. */
interface LocalWindow {
  /** Epoch ms the shared window ends at. */
  endsAt: number;
  /** Tokens leased from the shared window and not spent yet. */
  tokens: number;
  /** The limit the last lease was asked under. */
  limit: number;
  /** The last lease came back empty: refuse locally until the window ends or the limit is raised. */
  spent: boolean;
  /** A lease in flight; requests that find no token wait for it rather than leasing on their own. */
  leasing?: Promise<void>;
  /** Requests waiting for a lease, not yet resumed (the next lease asks for at least as many). */
  waiting: number;
}

/** Leases are at least this fraction of the limit, so a busy key touches the database ~20 times a window at most. */
const LEASE_FRACTION = 20;
const MAX_INT = 2 ** 31 - 1;

/**
 * A fixed-window limit per key shared by every process on the database (issue 20). The window and its count
 * live in a row of `rate_limit_windows`; each process leases tokens from it in chunks (one atomic statement)
 * and spends them in memory, so a request costs no database write except when its process's chunk runs out.
 * The total admitted in a window never exceeds the limit; tokens leased and not spent by the window's end are
 * lost (under-admission, bounded by the leases' halving, see leaseTokens). Limits small enough that a twentieth
 * is under 2 are exact per request.
 */
export class RateLimiter {
  readonly #db: Db;
  readonly #scope: string;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #windows = new Map<string, LocalWindow>();

  /**
   * `scope` names the limit in the shared table (keys are `scope:key`). `maxKeys` bounds this process's memory:
   * past it, ended windows are dropped, then the oldest ones (their shared counts stay in the database).
   */
  constructor(db: Db, scope: string, windowMs: number, maxKeys = 100_000) {
    this.#db = db;
    this.#scope = scope;
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
  }

  /**
   * Counts one request for `key` from the tokens this process already holds, without waiting; false (nothing
   * counted) when `hit` must decide: no token held, the window ended or the limit was lowered. The usual case of
   * a busy key costs no promise (issue 20, read paths).
   */
  take(key: string, limit: number, now = Date.now()): boolean {
    const window = this.#windows.get(key);
    if (!window || window.tokens <= 0 || now >= window.endsAt || boundedLimit(limit) < window.limit) return false;
    window.tokens -= 1;
    return true;
  }

  /**
   * Counts one request for `key`; throws 429 rate_limited with Retry-After (to the shared window's end) past `limit`.
   */
  async hit(key: string, limit: number, now = Date.now()): Promise<void> {
    const bounded = boundedLimit(limit);
    for (;;) {
      const at = now;
      let window = this.#windows.get(key);
      if (window && at >= window.endsAt && !window.leasing) {
        this.#windows.delete(key);
        window = undefined;
      }
      if (!window) {
        if (this.#windows.size >= this.#maxKeys) this.#makeRoom(at);
        window = { endsAt: 0, tokens: 0, limit: bounded, spent: false, waiting: 0 };
        this.#windows.set(key, window);
      }
      // A lowered limit gives back nothing leased under the old one: the tokens are dropped instead.
      if (bounded < window.limit) window.tokens = 0;
      if (window.tokens > 0 && at < window.endsAt) {
        window.tokens -= 1;
        return;
      }
      if (window.leasing) {
        window.waiting += 1;
        await window.leasing;
        window.waiting -= 1;
        continue;
      }
      if (window.spent && bounded <= window.limit && at < window.endsAt) throw refusal(window.endsAt - at);
      window.leasing = this.#lease(key, window, bounded, at);
      await window.leasing;
    }
  }

  async #lease(key: string, window: LocalWindow, limit: number, at: number): Promise<void> {
    const wanted = Math.min(MAX_INT, Math.max(1, Math.floor(limit / LEASE_FRACTION), window.waiting + 1));
    try {
      const lease = await leaseTokens(this.#db, `${this.#scope}:${key}`, wanted, limit, this.#windowMs, at);
      window.endsAt = lease.windowEndMs;
      window.tokens = lease.granted;
      window.limit = limit;
      window.spent = lease.granted === 0;
    } finally {
      window.leasing = undefined;
    }
  }

  /** How many keys this process holds now (for tests and metrics). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Drops ended windows; if every window is live (many addresses in one window, as in a spread-out flood),
   * drops the oldest tenth too, so memory stays bounded. A dropped key keeps its shared count; only the
   * tokens this process held for it are lost.
   */
  #makeRoom(now: number): void {
    const target = Math.floor(this.#maxKeys * 0.9);
    for (const [key, w] of this.#windows) {
      if (w.leasing) continue;
      if (now < w.endsAt && this.#windows.size <= target) break;
      this.#windows.delete(key);
    }
  }
}

function boundedLimit(limit: number): number {
  return Math.min(Math.max(0, Math.floor(limit)), MAX_INT);
}

function refusal(msLeft: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(msLeft / 1000));
  return new AppError('rate_limited', 'Too many requests; slow down', {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

/** Deletes the shared windows that have ended (housekeeping). */
export function purgeEndedRateLimitWindows(db: Db, nowMs: number): Promise<number> {
  return deleteEndedWindows(db, nowMs);
}
