import type { Context, Next } from 'koa';

/**
 * Sets constant headers with Node's setHeader: Koa's `ctx.set` builds arrays and closures per call to allow
 * lists and objects, a few kilobytes of garbage per request for the handful every answer carries (issue 20, read
 * paths). Like `ctx.set`, nothing is set once the headers are sent.
 */
export function setConstantHeaders(ctx: Context, headers: readonly (readonly [string, string])[]): void {
  if (ctx.res.headersSent) return;
  for (const [name, value] of headers) ctx.res.setHeader(name, value);
}

// Answers hold customer data, a new session or a key shown once: no cache keeps them unless a route says so.
const COMMON = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
] as const;

const HSTS = [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains']] as const;

/** Headers every answer carries, the API's and the console's alike. */
export function setCommonSecurityHeaders(ctx: Context): void {
  setConstantHeaders(ctx, COMMON);
  if (ctx.secure) setConstantHeaders(ctx, HSTS);
}

/**
 * Conservative headers for an API that serves JSON, PDFs and the docs page: scripts only from this origin;
 * styles and data: images because the docs' renderer (Swagger UI) sets inline styles and icons.
 */
const API = [
  ['Referrer-Policy', 'no-referrer'],
  [
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src " +
      "'self'; frame-ancestors 'none'",
  ],
] as const;

export function securityHeaders(ctx: Context, next: Next): Promise<void> {
  setCommonSecurityHeaders(ctx);
  setConstantHeaders(ctx, API);
  // Not async itself: the request goes on without a promise of its own (issue 20).
  return next();
}
