import type { Context } from 'koa';
import type { Config } from '../config.ts';

/**
 * Whether the browser reached us over HTTPS (issue 33), which decides the cookies' `Secure` and `__Host-` names:
 * the request says so (`ctx.secure`, which reads X-Forwarded-Proto only when TRUST_PROXY is on), or the service
 * runs in production, which is served over HTTPS even by a proxy that does not say so (D-11's `Secure` there).
 */
export function servedOverHttps(ctx: Context, config: Pick<Config, 'NODE_ENV'>): boolean {
  return ctx.secure || config.NODE_ENV === 'production';
}

/**
 * A cookie's name that only this host over HTTPS can set: browsers accept a `__Host-` cookie only with `Secure`,
 * `Path=/` and no `Domain`, so a sibling subdomain or a page on plain HTTP cannot plant one. Over plain HTTP the
 * bare name (a browser refuses `Secure` cookies there, and anything can be planted anyway).
 */
export function hostOnlyName(name: string, https: boolean): string {
  return https ? `__Host-${name}` : name;
}

export interface CookieAttributes {
  https: boolean;
  sameSite: 'Strict' | 'Lax';
  /** Absent: a cookie for the browser's session. */
  expires?: Date;
}

/**
 * Appends one Set-Cookie: HttpOnly, Path=/, no Domain, `Secure` over HTTPS. Written out rather than through
 * koa's `ctx.cookies.set`, which refuses `Secure` when koa itself does not see HTTPS (production behind a proxy
 * without TRUST_PROXY).
 */
export function setCookie(ctx: Context, name: string, value: string, attributes: CookieAttributes): void {
  const parts = [`${name}=${value}`, 'HttpOnly', `SameSite=${attributes.sameSite}`, 'Path=/'];
  if (attributes.expires) {
    // Both forms of the lifetime: Max-Age for today's browsers (it wins, and needs no clock agreement), Expires
    // for the old ones.
    const seconds = Math.max(0, Math.ceil((attributes.expires.getTime() - Date.now()) / 1000));
    parts.push(`Max-Age=${seconds}`, `Expires=${attributes.expires.toUTCString()}`);
  }
  if (attributes.https) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** Tells the browser to drop the cookie: the same name and attributes, empty and expired. */
export function clearCookie(ctx: Context, name: string, attributes: Omit<CookieAttributes, 'expires'>): void {
  setCookie(ctx, name, '', { ...attributes, expires: new Date(0) });
}
