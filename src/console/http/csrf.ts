import type { Context } from 'koa';
import { readSessionCookie } from '../../auth/session-cookie.ts';
import { hmacSha256, randomToken, secretsEqual } from '../../crypto/tokens.ts';
import { AppError } from '../../errors.ts';
import { hostOnlyName, setCookie } from '../../http/cookies.ts';
import { isFormBody, readForm, type FormValues } from './form.ts';

/**
 * The console's CSRF token for a signed-in admin (C-6, issue 33): an HMAC keyed with the session's own token, the
 * 256-bit secret the browser holds in its HttpOnly cookie and the server keeps only as a hash, so the token is
 * bound to that session. Someone who can plant cookies (a sibling subdomain, plain HTTP) but not read them cannot
 * make a field that matches the victim's session; a token shown on a page does not reveal the session token; a
 * new session (every sign-in) has a new token. The key being the session's own secret, no server-wide secret is
 * needed (docs/decisions.md, issue 33).
 */
export function sessionCsrfToken(sessionToken: string): string {
  return hmacSha256(sessionToken, 'console-csrf');
}

const SIGN_IN_COOKIE = 'console_csrf';

/**
 * The sign-in form's token, before there is a session (issue 33): a double-submit token, a random value in an
 * HttpOnly, SameSite=Strict cookie repeated in the form. Over HTTPS the cookie is `__Host-console_csrf`, which
 * only this host over HTTPS can set, so a forged pair needs a cookie nobody else can plant; over plain HTTP
 * anyone on the path owns the sign-in anyway. The worst a forged sign-in can do is sign a browser in to the
 * forger's own account.
 */
export function signInCsrfToken(ctx: Context, https: boolean): string {
  const name = hostOnlyName(SIGN_IN_COOKIE, https);
  const existing = ctx.cookies.get(name);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken(32);
  setCookie(ctx, name, token, { https, sameSite: 'Strict' });
  return token;
}

/** True when the sign-in form's `_csrf` field repeats its cookie (the `__Host-` one over HTTPS). */
export function signInCsrfValid(ctx: Context, https: boolean, field: unknown): boolean {
  const cookie = ctx.cookies.get(hostOnlyName(SIGN_IN_COOKIE, https));
  return typeof field === 'string' && Boolean(cookie) && secretsEqual(field, cookie!);
}

/** True when the form's `_csrf` field is the token of the session whose cookie came with it. */
function sessionCsrfValid(ctx: Context, field: unknown): boolean {
  const sessionToken = readSessionCookie(ctx);
  return typeof field === 'string' && Boolean(sessionToken) && secretsEqual(field, sessionCsrfToken(sessionToken!));
}

/** The forms whose token `requireCsrf` checked, for the route that answers the POST. */
const checkedForms = new WeakMap<Context, FormValues>();

/**
 * C-6: a POST to the console without its session's token is refused (403) before anything runs. The check comes
 * before any other refusal of the body: a JSON or multipart body carries no form token, so it is refused as
 * one without a token, not for its media type. Sign-in has rules of its own (login.tsx) and is not sent here.
 */
export async function requireCsrf(ctx: Context): Promise<void> {
  const form = isFormBody(ctx) ? await readForm(ctx) : undefined;
  if (!form || !sessionCsrfValid(ctx, form._csrf))
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
