import type { Context } from 'koa';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { setCommonSecurityHeaders } from '../../http/security-headers.ts';
import { setOneUseCookie, takeOneUseCookie } from './one-use-cookie.ts';

/**
 * C-7: the console's own headers. Scripts and styles only from the service itself, no inline script or
 * eval, never framed, forms post only here.
 */
export function consoleHeaders(ctx: Context): void {
  setCommonSecurityHeaders(ctx);
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action " +
      "'self'; base-uri 'none'; frame-ancestors 'none'",
  );
  ctx.set('Referrer-Policy', 'same-origin');
}

/** A whole HTML page; preact escapes every text and attribute (C-7). */
export function sendPage(ctx: Context, page: VNode, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>${render(page)}`;
}

const NOTICE_COOKIE = 'console_notice';

/** A 303 after a successful action, with its confirmation carried to the next page in a one-use cookie. */
export function redirectWithNotice(ctx: Context, https: boolean, location: string, notice: string): void {
  setOneUseCookie(ctx, https, NOTICE_COOKIE, notice.slice(0, 200));
  ctx.status = 303;
  ctx.redirect(location);
}

/** The confirmation of the action that led here, once. */
export function takeNotice(ctx: Context, https: boolean): string | undefined {
  return takeOneUseCookie(ctx, https, NOTICE_COOKIE);
}
