import type { Context } from 'koa';
import { clearCookie, setCookie } from '../http/cookies.ts';

/**
 * The session cookie keeps the name the interface gives it (`session`, D-11) over HTTPS too: API clients name it.
 * Planting one (from a sibling subdomain) never becomes the victim's session (a new token at every login) and the
 * console's CSRF token is derived from the session the cookie names (console/http/csrf.ts).
 */
export const SESSION_COOKIE = 'session';

/** Set-Cookie for a new session (D-11): HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS (issue 33). */
export function setSessionCookie(ctx: Context, token: string, expiresAt: Date, https: boolean): void {
  setCookie(ctx, SESSION_COOKIE, token, { https, sameSite: 'Lax', expires: expiresAt });
}

export function clearSessionCookie(ctx: Context, https: boolean): void {
  clearCookie(ctx, SESSION_COOKIE, { https, sameSite: 'Lax' });
}

export function readSessionCookie(ctx: Context): string | undefined {
  return ctx.cookies.get(SESSION_COOKIE) || undefined;
}
