import type { Context, Next } from 'koa';

/** Headers every answer carries, the API's and the console's alike. */
export function setCommonSecurityHeaders(ctx: Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  // Answers hold customer data, a new session or a key shown once: no cache keeps them unless a route says so.
  ctx.set('Cache-Control', 'no-store');
}

/**
 * Conservative headers for an API that serves JSON, PDFs and the docs page: scripts only from this origin;
 * styles and data: images because the docs' renderer (Swagger UI) sets inline styles and icons.
 */
export function securityHeaders(ctx: Context, next: Next): Promise<void> {
  setCommonSecurityHeaders(ctx);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'");
  // Not async itself: the request goes on without a promise of its own (issue 20).
  return next();
}
