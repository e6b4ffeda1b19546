/**
 * The hosted invoice page's requests (H-1, H-2, K-2): `GET /i/<token>`, `GET /i/<token>/pdf`,
 * `POST /i/<token>/pay/<provider>` and the stylesheet, answered before the console and the API with the console's
 * security headers. Every request for a token is counted per client IP as the public license endpoints are
 * (http/rate-limit.ts), so guessing tokens is slow for the guesser and costs others nothing.
 */
import { readFile } from 'node:fs/promises';
import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { startCheckout, type CheckoutProvider } from '../checkout/service.ts';
import { publicBaseUrl } from '../config.ts';
import { sendPage } from '../console/http/render.ts';
import { findCustomer } from '../customers/service.ts';
import { AppError } from '../errors.ts';
import { errorStatus } from '../http/error-status.ts';
import { RateLimiter } from '../http/rate-limit.ts';
import { setCommonSecurityHeaders } from '../http/security-headers.ts';
import { requestLog } from '../http/request-context.ts';
import { getInvoicePdf } from '../invoices/pdf/service.ts';
import { pdfReply } from '../invoices/pdf/routes.ts';
import { getInvoice } from '../invoices/service.ts';
import { assertProviderConfigured } from '../providers/configured.ts';
import { getSettingCached } from '../settings/cache.ts';
import { companyDetails } from '../settings/company.ts';
import { HOSTED_STYLESHEET_PATH, HostedInvoicePage, HostedMessagePage, type PayOption } from './page.tsx';
import { findHostedInvoice } from '../invoices/hosted-links.ts';

const STYLESHEET = new URL('./assets/hosted.css', import.meta.url);

const PROVIDERS: { provider: CheckoutProvider; label: string }[] = [
  { provider: 'provider_a', label: 'Provider A' },
  { provider: 'provider_b', label: 'Provider B' },
];

/**
 * K-2: the console's policy. Forms post here; a Pay answer redirects to the provider's page, which form-action must
 * let through (browsers check a form's redirects against it), so https: is allowed as a form target too.
 */
function hostedHeaders(ctx: Context): void {
  setCommonSecurityHeaders(ctx);
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https:; base-uri 'none'; " +
      "frame-ancestors 'none'",
  );
  ctx.set('Referrer-Policy', 'no-referrer');
}

function configuredProviders(deps: AppDeps): PayOption[] {
  return PROVIDERS.filter(({ provider }) => {
    try {
      assertProviderConfigured(deps.config, provider, 'api');
      return true;
    } catch {
      return false;
    }
  });
}

const limiters = new WeakMap<object, RateLimiter>();

async function withinLimit(ctx: Context, deps: AppDeps): Promise<boolean> {
  let limiter = limiters.get(deps.config);
  if (!limiter) {
    limiter = new RateLimiter(deps.db, 'invoices.hosted', 60_000);
    limiters.set(deps.config, limiter);
  }
  const limit = await getSettingCached(deps.db, 'invoices.hosted_rate_limit_per_minute');
  if (limiter.take(ctx.ip, limit)) return true;
  try {
    await limiter.hit(ctx.ip, limit);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'rate_limited') {
      if (error.headers) for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      return false;
    }
    throw error;
  }
}

async function showInvoice(ctx: Context, deps: AppDeps, token: string, problem?: string, status = 200) {
  const invoice = await findHostedInvoice(deps.db, token);
  const [company, customer, { lines }] = await Promise.all([
    companyDetails(deps.db),
    findCustomer(deps.db, invoice.customer_id),
    getInvoice(deps.db, invoice.id),
  ]);
  const payOptions = configuredProviders(deps);
  sendPage(
    ctx,
    HostedInvoicePage({ company, customerName: customer.name, invoice, lines, token, payOptions, problem }),
    status,
  );
}

/** H-2: Pay starts the provider's checkout as the customer (K-2) and sends them there (303). */
async function pay(ctx: Context, deps: AppDeps, token: string, provider: string) {
  const invoice = await findHostedInvoice(deps.db, token);
  const option = configuredProviders(deps).find((p) => p.provider === provider);
  if (!option) throw new AppError('not_found', 'No such payment option');
  const back = `${publicBaseUrl(deps.config)}/i/${token}`;
  try {
    const session = await startCheckout(
      deps.db,
      deps.config,
      option.provider as CheckoutProvider,
      { invoiceId: invoice.id, successUrl: back, cancelUrl: back },
      { type: 'customer', customerId: invoice.customer_id, requestId: ctx.state.requestId ?? null, ip: ctx.ip },
    );
    ctx.status = 303;
    ctx.redirect(session.url);
  } catch (error) {
    if (!(error instanceof AppError) || error.code === 'not_found') throw error;
    const message =
      error.code === 'invoice_not_payable'
        ? 'This invoice has nothing left to pay.'
        : 'The payment could not be started; try again in a minute.';
    await showInvoice(ctx, deps, token, message, errorStatus[error.code]);
  }
}

async function answer(ctx: Context, deps: AppDeps, parts: string[]): Promise<void> {
  const [token, action, provider] = parts;
  if (!token) throw new AppError('not_found', 'Not found');
  if (!(await withinLimit(ctx, deps))) {
    sendPage(ctx, HostedMessagePage({ title: 'Too many requests', message: 'Wait a minute, then try again.' }), 429);
    return;
  }
  // HEAD answers as GET without the body (koa drops it): link checkers and mail scanners ask with HEAD.
  const read = ctx.method === 'GET' || ctx.method === 'HEAD';
  if (read && parts.length === 1) return showInvoice(ctx, deps, token);
  if (read && action === 'pdf' && parts.length === 2) {
    const invoice = await findHostedInvoice(deps.db, token);
    const reply = pdfReply(await getInvoicePdf(deps.db, invoice.id));
    ctx.status = reply.status ?? 200;
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
    ctx.body = reply.body;
    return;
  }
  if (ctx.method === 'POST' && action === 'pay' && provider && parts.length === 3)
    return pay(ctx, deps, token, provider);
  throw new AppError('not_found', 'Not found');
}

export function hostedInvoicePages(deps: AppDeps): Middleware {
  let stylesheet: Buffer | undefined;
  return async (ctx: Context, next: Next) => {
    if (!ctx.path.startsWith('/i/')) return next();
    hostedHeaders(ctx);
    if (ctx.path === HOSTED_STYLESHEET_PATH && ctx.method === 'GET') {
      stylesheet ??= await readFile(STYLESHEET);
      ctx.type = 'text/css; charset=utf-8';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = stylesheet;
      return;
    }
    try {
      await answer(ctx, deps, ctx.path.slice(3).split('/'));
    } catch (error) {
      const known = error instanceof AppError && errorStatus[error.code] < 500;
      if (!known) requestLog(ctx, deps.logger).error({ err: error }, 'hosted invoice page failed');
      const status = known ? errorStatus[(error as AppError).code] : 500;
      const page =
        status === 404
          ? { title: 'Invoice not found', message: 'This invoice link is not valid. Ask the sender for a new one.' }
          : { title: 'Something went wrong', message: 'The page could not be shown; try again in a minute.' };
      sendPage(ctx, HostedMessagePage(page), status);
    }
  };
}
