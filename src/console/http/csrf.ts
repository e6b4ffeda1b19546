import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { secretsEqual } from '../../crypto/tokens.ts';

const CSRF_COOKIE = 'console_csrf';

/**
 * The console's CSRF token (C-6), a double-submit token: a random value in an HttpOnly, SameSite=Strict
 * cookie scoped to /admin, repeated in a hidden field of every form. Another site can make a browser send
 * the cookie (it cannot: Strict) but never read it to fill the field.
 */
export function csrfToken(ctx: Context, secure: boolean): string {
  const existing = ctx.cookies.get(CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  const parts = [`${CSRF_COOKIE}=${token}`, 'HttpOnly', 'SameSite=Strict', 'Path=/admin'];
  if (secure) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
  return token;
}

/** True when the form's `_csrf` field repeats the cookie. */
export function csrfValid(ctx: Context, field: unknown): boolean {
  const cookie = ctx.cookies.get(CSRF_COOKIE);
  return typeof field === 'string' && Boolean(cookie) && secretsEqual(field, cookie!);
}
