import { AppError } from './errors.ts';

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

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Counts one request for `key`; throws 429 rate_limited with Retry-After past `limit`. */
  hit(key: string, limit: number, now = Date.now()): void {
    let window = this.#windows.get(key);
    if (!window || now - window.started >= this.#windowMs) {
      if (this.#windows.size > 100_000) this.#sweep(now);
      window = { started: now, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    if (window.count > limit) {
      const retryAfter = Math.max(1, Math.ceil((window.started + this.#windowMs - now) / 1000));
      throw new AppError('rate_limited', 'Too many requests; slow down', { headers: { 'Retry-After': String(retryAfter) } });
    }
  }

  #sweep(now: number): void {
    for (const [key, w] of this.#windows) if (now - w.started >= this.#windowMs) this.#windows.delete(key);
  }
}
