import type { Context } from 'koa';
import { clearCookie, hostOnlyName, setCookie } from '../../http/cookies.ts';

/**
 * Carries a value from an action's 303 to the next page (a confirmation, a secret shown once): HttpOnly,
 * SameSite=Strict, and cleared as it is read, so a reload no longer shows it. Over HTTPS it is `Secure` and named
 * `__Host-<name>` (issue 33): a planted one cannot pass for a confirmation or a new key.
 */
export function setOneUseCookie(ctx: Context, https: boolean, name: string, value: string, maxAgeMs?: number): void {
  setCookie(ctx, hostOnlyName(name, https), encodeURIComponent(value), {
    https,
    sameSite: 'Strict',
    ...(maxAgeMs ? { expires: new Date(Date.now() + maxAgeMs) } : {}),
  });
}

/** The value, once: the cookie is cleared as it is read. */
export function takeOneUseCookie(ctx: Context, https: boolean, name: string): string | undefined {
  const cookieName = hostOnlyName(name, https);
  const raw = ctx.cookies.get(cookieName);
  if (!raw) return undefined;
  clearCookie(ctx, cookieName, { https, sameSite: 'Strict' });
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
