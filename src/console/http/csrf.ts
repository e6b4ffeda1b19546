import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { secretsEqual } from '../../crypto/tokens.ts';
import { AppError } from '../../errors.ts';
import { isFormBody, readForm, type FormValues } from './form.ts';

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

/** The forms whose token `requireCsrf` checked, for the route that answers the POST. */
const checkedForms = new WeakMap<Context, FormValues>();

/**
 * C-6: a POST to the console without a valid token is refused (403) before anything runs. The check comes
 * before any other refusal of the body: a JSON or multipart body carries no form token, so it is refused as
 * one without a token, not for its media type. Sign-in has rules of its own (login.tsx) and is not sent here.
 */
export async function requireCsrf(ctx: Context): Promise<void> {
  const form = isFormBody(ctx) ? await readForm(ctx) : undefined;
  if (!form || !csrfValid(ctx, form._csrf))
    throw new AppError(
      'forbidden',
      'The form has expired or did not come from this console: reload the page and try again',
    );
  checkedForms.set(ctx, form);
}

/** The posted form, once `requireCsrf` has checked its token. */
export function checkedForm(ctx: Context): FormValues {
  const form = checkedForms.get(ctx);
  if (!form) throw new Error('a console POST reached its route without its CSRF check');
  return form;
}
