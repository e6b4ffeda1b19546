import { AppError } from '../errors.ts';

interface Window {
  started: number;
  count: number;
}

/**
 * A fixed-window counter per key, in this process's memory. Kept in memory because the limited
 * endpoints are the hottest ones and a database write per request would halve their throughput;
 * the price is that each web process counts on its own (docs/decisions.md).
 */
export class RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #windowMs: number;
  readonly #maxKeys: number;

  /** `maxKeys` bounds the memory: past it, ended windows are dropped, then the oldest ones. */
  constructor(windowMs: number, maxKeys = 100_000) {
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
  }

  /** Counts one request for `key`; throws 429 rate_limited with Retry-After past `limit`. */
  hit(key: string, limit: number, now = Date.now()): void {
    let window = this.#windows.get(key);
    if (!window || now - window.started >= this.#windowMs) {
      // Re-inserted, so the map stays in window start order and the oldest come first.
      this.#windows.delete(key);
      if (this.#windows.size >= this.#maxKeys) this.#makeRoom(now);
      window = { started: now, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    if (window.count > limit) {
      const retryAfter = Math.max(1, Math.ceil((window.started + this.#windowMs - now) / 1000));
      throw new AppError('rate_limited', 'Too many requests; slow down', { headers: { 'Retry-After': String(retryAfter) } });
    }
  }

  /** How many keys are counted now (for tests and metrics). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Drops ended windows, which sit at the front; if every window is live (many addresses in one
   * window, as in a spread-out flood), drops the oldest tenth too, so memory stays bounded and the
   * next room is made only after many more new keys. A dropped key starts a fresh count.
   */
  #makeRoom(now: number): void {
    const target = Math.floor(this.#maxKeys * 0.9);
    for (const [key, w] of this.#windows) {
      if (now - w.started < this.#windowMs && this.#windows.size <= target) break;
      this.#windows.delete(key);
    }
  }
}
