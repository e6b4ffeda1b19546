/**
 * The customer portal's pages (P-1..P-7, K-2): `/portal...`, answered before the console's API with the console's
 * security headers. A page needs the `portal_session` cookie (else the sign-in page); an admin's `session` cookie is
 * no portal session, and the portal's cookie is nothing to the console or the API. Every POST carries its token,
 * checked before anything runs.
 */
import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { isFormBody, readForm, type FormValues } from '../console/http/form.ts';
import { consoleHeaders, redirectWithNotice, sendPage, takeNotice } from '../console/http/render.ts';
import { hmacSha256, secretsEqual } from '../crypto/tokens.ts';
import { findCustomer } from '../customers/service.ts';
import { AppError } from '../errors.ts';
import { servedOverHttps } from '../http/cookies.ts';
import { errorStatus } from '../http/error-status.ts';
import { requestLog } from '../http/request-context.ts';
import { portalSite } from '../portal/features.ts';
import { authenticatePortalSession } from '../portal/sessions.ts';
import { companyDetails } from '../settings/company.ts';
import { ErrorPage } from './error-page.tsx';
import { PORTAL_STYLESHEET_PATH } from './layout.tsx';
import {
  askForCode,
  checkCode,
  logout,
  openLink,
  readPortalCookie,
  rememberWantedPage,
  showCodeForm,
  showLogin,
} from './login.tsx';
import { portalRoutes } from './pages.ts';
import type { PortalAction, PortalPage } from './route.ts';
import type { PortalViewer } from './viewer.ts';

const STYLESHEET = new URL('./assets/portal.css', import.meta.url);

/** The form token of a portal session: bound to the session's own secret, as the console's (console/http/csrf.ts). */
const portalCsrf = (sessionToken: string) => hmacSha256(sessionToken, 'portal-csrf');

const viewers = new WeakMap<Context, PortalViewer>();

async function viewerOf(ctx: Context, deps: AppDeps): Promise<PortalViewer> {
  const token = readPortalCookie(ctx);
  const session = await authenticatePortalSession(deps.db, token);
  const [customer, { company, features }] = await Promise.all([
    findCustomer(deps.db, session.customer_id),
    portalSite(deps.db),
  ]);
  const viewer: PortalViewer = {
    customerId: customer.id,
    customerName: customer.name,
    company,
    csrf: portalCsrf(token!),
    returnUrl: session.return_url,
    features,
    actor: { type: 'customer', customerId: customer.id, requestId: ctx.state.requestId ?? null, ip: ctx.ip },
  };
  viewers.set(ctx, viewer);
  return viewer;
}

/** A portal POST without its session's token is refused (403) before anything runs. */
async function checkedForm(ctx: Context): Promise<FormValues> {
  const form = isFormBody(ctx) ? await readForm(ctx) : undefined;
  const token = readPortalCookie(ctx);
  const field = form?._csrf;
  if (!form || !token || typeof field !== 'string' || !secretsEqual(field, portalCsrf(token)))
    throw new AppError(
      'forbidden',
      'The form has expired or did not come from this portal: reload the page and try again',
    );
  return form;
}

const queryOf = (ctx: Context): Record<string, string> =>
  Object.fromEntries(Object.entries(ctx.query).filter((e): e is [string, string] => typeof e[1] === 'string'));

async function servePage(route: PortalPage, ctx: Context, deps: AppDeps): Promise<void> {
  let viewer: PortalViewer;
  try {
    viewer = await viewerOf(ctx, deps);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'unauthenticated')) throw error;
    rememberWantedPage(ctx, deps);
    ctx.redirect('/portal/login');
    return;
  }
  const notice = takeNotice(ctx, servedOverHttps(ctx, deps.config));
  ctx.status = 200;
  const page = await route.render({ deps, ctx, params: ctx.params, query: queryOf(ctx), viewer, notice });
  sendPage(ctx, page, ctx.status);
}

async function serveAction(route: PortalAction, ctx: Context, deps: AppDeps): Promise<void> {
  const form = await checkedForm(ctx);
  const viewer = await viewerOf(ctx, deps);
  try {
    const done = await route.run({ deps, ctx, params: ctx.params, form, viewer });
    if ('file' in done) {
      ctx.status = 200;
      ctx.type = done.file.contentType;
      ctx.set('Content-Disposition', `attachment; filename="${done.file.filename}"`);
      ctx.body = done.file.body;
    } else redirectWithNotice(ctx, servedOverHttps(ctx, deps.config), done.redirect, done.notice);
  } catch (error) {
    // Not found and switched off are answered as such; a refusal shows the form again with its reason.
    if (!(error instanceof AppError) || errorStatus[error.code] >= 500) throw error;
    if (error.code === 'not_found' || error.code === 'forbidden') throw error;
    const state = { name: route.form, error, values: form };
    const page = await route.page.render({ deps, ctx, params: ctx.params, query: {}, viewer, state });
    sendPage(ctx, page, errorStatus[error.code]);
  }
}

function buildRouter(deps: AppDeps) {
  const router = new Router();
  let stylesheet: Buffer | undefined;
  router.get(PORTAL_STYLESHEET_PATH, async (ctx) => {
    stylesheet ??= await readFile(STYLESHEET);
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = stylesheet;
  });
  router.get('/portal/s/:token', (ctx) => openLink(ctx, deps, ctx.params.token!));
  router.get('/portal/login', (ctx) => showLogin(ctx, deps));
  router.post('/portal/login', (ctx) => askForCode(ctx, deps));
  router.get('/portal/login/code', (ctx) => showCodeForm(ctx, deps));
  router.post('/portal/login/code', (ctx) => checkCode(ctx, deps));
  router.post('/portal/logout', async (ctx) => {
    await checkedForm(ctx);
    await logout(ctx, deps);
  });
  for (const route of portalRoutes) {
    if (route.kind === 'page') router.get(route.path, (ctx) => servePage(route, ctx, deps));
    else router.post(route.path, (ctx) => serveAction(route, ctx, deps));
  }
  return router.routes();
}

async function sendError(ctx: Context, deps: AppDeps, error: AppError): Promise<void> {
  const viewer = viewers.get(ctx);
  const company = viewer?.company ?? (await companyDetails(deps.db).catch(() => undefined));
  sendPage(ctx, ErrorPage({ error, viewer, companyName: company?.name ?? '' }), errorStatus[error.code]);
}

export function portalPages(deps: AppDeps): Middleware {
  const routes = buildRouter(deps);
  const serve = async (ctx: Context) => {
    consoleHeaders(ctx);
    try {
      await routes(ctx as Parameters<typeof routes>[0], async () => {
        throw new AppError('not_found', `No portal page at ${ctx.path}`);
      });
    } catch (error) {
      const known = error instanceof AppError && errorStatus[error.code] < 500 ? error : undefined;
      if (!known) requestLog(ctx, deps.logger).error({ err: error }, 'portal page failed');
      await sendError(ctx, deps, known ?? new AppError('internal_error', 'Something went wrong on our side'));
    }
  };
  return (ctx: Context, next: Next) =>
    ctx.path === '/portal' || ctx.path.startsWith('/portal/') ? serve(ctx) : next();
}
