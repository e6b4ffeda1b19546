import type { Context } from 'koa';

const OPTIONS = { httpOnly: true, sameSite: 'strict', path: '/admin', overwrite: true } as const;

/**
 * Carries a value from an action's 303 to the next page (a confirmation, a secret shown once): HttpOnly,
 * SameSite=Strict, scoped to the console, and cleared as it is read, so a reload no longer shows it.
 */
export function setOneUseCookie(ctx: Context, name: string, value: string, maxAgeMs?: number): void {
  ctx.cookies.set(name, encodeURIComponent(value), { ...OPTIONS, ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) });
}

/** The value, once: the cookie is cleared as it is read. */
export function takeOneUseCookie(ctx: Context, name: string): string | undefined {
  const raw = ctx.cookies.get(name);
  if (!raw) return undefined;
  ctx.cookies.set(name, '', { ...OPTIONS, expires: new Date(0) });
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
