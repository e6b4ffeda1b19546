import type { Context } from 'koa';

const REVEAL_COOKIE = 'console_reveal';
const REVEAL_SECONDS = 60;

/**
 * A secret shown once (a new API key): carried from the action's 303 to the next page in a one-use,
 * HttpOnly, SameSite=Strict cookie that lives a minute, so it is never stored by the service and a reload
 * of the page no longer shows it. The redirect keeps C-6 (a reload never posts the form again).
 */
export function revealOnce(ctx: Context, secret: string): void {
  ctx.cookies.set(REVEAL_COOKIE, encodeURIComponent(secret), { httpOnly: true, sameSite: 'strict', path: '/admin', maxAge: REVEAL_SECONDS * 1000, overwrite: true });
}

/** The secret to show on this page, once: the cookie is cleared as it is read. */
export function takeReveal(ctx: Context): string | undefined {
  const raw = ctx.cookies.get(REVEAL_COOKIE);
  if (!raw) return undefined;
  ctx.cookies.set(REVEAL_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/admin', expires: new Date(0), overwrite: true });
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
