import type { Context } from 'koa';
import { setOneUseCookie, takeOneUseCookie } from './one-use-cookie.ts';

const REVEAL_COOKIE = 'console_reveal';
const REVEAL_MS = 60_000;

/**
 * A secret shown once (a new API key): carried from the action's 303 to the next page in a one-use cookie
 * that lives a minute (`Secure` over HTTPS, issue 33), so it is never stored by the service and a reload of the
 * page no longer shows it. The redirect keeps C-6 (a reload never posts the form again).
 */
export function revealOnce(ctx: Context, https: boolean, secret: string): void {
  setOneUseCookie(ctx, https, REVEAL_COOKIE, secret, REVEAL_MS);
}

/** The secret to show on this page, once. */
export function takeReveal(ctx: Context, https: boolean): string | undefined {
  return takeOneUseCookie(ctx, https, REVEAL_COOKIE);
}
