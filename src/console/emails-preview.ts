/**
 * `GET /admin/emails/:id/html`: an email's HTML part for the email page's frame (M-5). It is the customer's email,
 * not a console page: served with a CSP `sandbox` (an opaque origin, no script, no forms), no network at all but
 * inline styles (emails carry their CSS inline) and data: images, and only the console may frame it.
 */
import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { authenticateAdminSession } from '../auth/service.ts';
import { readSessionCookie } from '../auth/session-cookie.ts';
import { getEmail } from '../emails/service.ts';
import { AppError } from '../errors.ts';
import { setCommonSecurityHeaders } from '../http/security-headers.ts';

const PATH = /^\/admin\/emails\/([0-9a-f-]{36})\/html$/;

export function emailPreview(deps: AppDeps): Middleware {
  return async (ctx: Context, next: Next) => {
    const match = ctx.method === 'GET' ? PATH.exec(ctx.path) : null;
    if (!match) return next();
    setCommonSecurityHeaders(ctx);
    ctx.set('X-Frame-Options', 'SAMEORIGIN');
    ctx.set(
      'Content-Security-Policy',
      "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
    );
    try {
      await authenticateAdminSession(deps.db, readSessionCookie(ctx));
      const email = await getEmail(deps.db, match[1]!);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = email.html ?? '';
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      ctx.status = error.code === 'not_found' ? 404 : 401;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = error.code === 'not_found' ? 'Not found' : 'Sign in to the console first';
    }
  };
}
