/**
 * P-2: how often sign-in may be tried, shared by every web process (http/rate-limit.ts). Asking for a code is
 * limited per IP and per address (so nobody floods an inbox), checking a code per IP (on top of each code's 5 tries).
 */
import type { Context } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { sha256Hex } from '../crypto/tokens.ts';
import { AppError } from '../errors.ts';
import { RateLimiter } from '../http/rate-limit.ts';

const WINDOW_MS = 15 * 60_000;
export const SIGN_IN_LIMITS = { codesPerIp: 30, codesPerAddress: 5, checksPerIp: 60 } as const;

interface Limiters {
  codes: RateLimiter;
  checks: RateLimiter;
}
const byDb = new WeakMap<object, Limiters>();

function limiters(deps: AppDeps): Limiters {
  let found = byDb.get(deps.db);
  if (!found) {
    found = {
      codes: new RateLimiter(deps.db, 'portal.codes', WINDOW_MS),
      checks: new RateLimiter(deps.db, 'portal.checks', WINDOW_MS),
    };
    byDb.set(deps.db, found);
  }
  return found;
}

async function within(limiter: RateLimiter, key: string, limit: number): Promise<boolean> {
  if (limiter.take(key, limit)) return true;
  try {
    await limiter.hit(key, limit);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'rate_limited') return false;
    throw error;
  }
}

/** A code may be asked for from this IP and for this address; the same answer for any address either way. */
export async function mayAskForCode(ctx: Context, deps: AppDeps, email: string): Promise<boolean> {
  const { codes } = limiters(deps);
  const address = `email:${sha256Hex(email.trim().toLowerCase())}`;
  return (
    (await within(codes, `ip:${ctx.ip}`, SIGN_IN_LIMITS.codesPerIp)) &&
    (await within(codes, address, SIGN_IN_LIMITS.codesPerAddress))
  );
}

export async function mayCheckCode(ctx: Context, deps: AppDeps): Promise<boolean> {
  return within(limiters(deps).checks, `ip:${ctx.ip}`, SIGN_IN_LIMITS.checksPerIp);
}
