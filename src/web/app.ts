import Koa from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { errorMiddleware } from './error-middleware.ts';
import { requestContext } from '../http/request-context.ts';
import { buildRouter } from './router.ts';
import { securityHeaders } from '../http/security-headers.ts';
import { allRoutes } from './routes.ts';
import { consoleMiddleware } from '../console/router.ts';
import { docsAssets } from '../docs/assets.ts';
import { emailPreview } from '../console/emails-preview.ts';
import { hostedInvoicePages } from '../hosted-invoices/pages.ts';
import { portalPages } from '../portal-pages/router.ts';

/** The Koa application, without listen(): the server entry point and the tests both build it here. */
export function createApp(deps: AppDeps): Koa {
  // The client writes the left of X-Forwarded-For; only the entries our own proxies appended count.
  const app = new Koa({ proxy: deps.config.TRUST_PROXY, maxIpsCount: deps.config.PROXY_HOPS });
  app.use(requestContext(deps.logger));
  // The console answers / and /admin with its own headers, forms and error pages; the API the rest.
  // An email's HTML part for the console's sandboxed frame, with its own CSP (console/emails-preview.ts).
  app.use(emailPreview(deps));
  app.use(consoleMiddleware(deps));
  // The hosted invoice pages (/i/...) answer with their own pages and the console's headers (K-2).
  app.use(hostedInvoicePages(deps));
  // The customer portal (/portal...): its own session cookie, pages and headers (P-1..P-7, K-2).
  app.use(portalPages(deps));
  app.use(securityHeaders);
  app.use(errorMiddleware(deps.logger));
  app.use(docsAssets);
  app.use(buildRouter(allRoutes, deps));
  return app;
}
