/**
 * The admin console (console.md): server-rendered pages under /admin on the web process, calling the same
 * domain services as the API. `consoleMiddleware` answers `/` and `/admin...` and passes everything else on.
 */
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { authenticateAdminSession } from '../auth/service.ts';
import { readSessionCookie } from '../auth/session-cookie.ts';
import { AppError } from '../errors.ts';
import { FORM_TOKEN_PATTERN, oncePerFormToken } from '../idempotency/form-tokens.ts';
import { servedOverHttps } from '../http/cookies.ts';
import { errorStatus } from '../http/error-status.ts';
import { requestLog } from '../http/request-context.ts';
import { ErrorPage } from './components/ErrorPage.tsx';
import type { FormState } from './components/Form.tsx';
import { withRefusal } from './components/Refusal.tsx';
import { checkedForm, requireCsrf, sessionCsrfToken } from './http/csrf.ts';
import { CSV_BOM, csvLine } from './http/csv.ts';
import { consoleHeaders, redirectWithNotice, sendPage, takeNotice } from './http/render.ts';
import type {
  ActionDone,
  ConsoleAction,
  ConsoleExport,
  ConsolePage,
  ConsoleRoute,
  ConsoleViewer,
} from './http/route.ts';
import { LOGIN_PATH, loginRoutes } from './pages/login.tsx';
import { consolePages } from './pages/index.ts';

const STYLESHEET = new URL('./assets/console.css', import.meta.url);

/** The admin a page is rendered for, by request: an error page shows the navigation when there is one (C-3). */
const viewers = new WeakMap<Context, ConsoleViewer>();

/** The viewer of an admin session: the API's admin check (auth/service.ts), the same for every console request. */
async function adminViewer(ctx: Context, deps: AppDeps): Promise<ConsoleViewer> {
  const token = readSessionCookie(ctx);
  const session = await authenticateAdminSession(deps.db, token);
  return { userId: session.user_id, email: session.email, csrf: sessionCsrfToken(token!) };
}

/** The admin behind the session cookie, or a redirect to the login page (C-1) / a refusal for other roles (C-7). */
async function viewerOf(ctx: Context, deps: AppDeps): Promise<ConsoleViewer | undefined> {
  let viewer: ConsoleViewer;
  try {
    viewer = await adminViewer(ctx, deps);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'unauthenticated')) throw error;
    ctx.redirect(`/admin/login?next=${encodeURIComponent(ctx.originalUrl)}`);
    return undefined;
  }
  viewers.set(ctx, viewer);
  return viewer;
}

/** For an error page: the admin of the request if there is one, found without redirecting or refusing. */
async function adminFor(ctx: Context, deps: AppDeps): Promise<ConsoleViewer | undefined> {
  const known = viewers.get(ctx);
  if (known) return known;
  try {
    return await adminViewer(ctx, deps);
  } catch {
    // No admin (no session, another role) or the database that failed the page: the bare error page needs none.
    return undefined;
  }
}

async function sendErrorPage(ctx: Context, deps: AppDeps, error: AppError): Promise<void> {
  const viewer = await adminFor(ctx, deps);
  // A list asked for with a filter it does not understand offers itself without any (C-3, C-4).
  const unfiltered =
    ctx.method === 'GET' && ctx.querystring !== '' && error.code === 'invalid_request' ? ctx.path : undefined;
  sendPage(ctx, ErrorPage({ error, viewer, path: ctx.path, query: ctx.query, unfiltered }), errorStatus[error.code]);
}

function queryOf(page: ConsolePage | ConsoleExport, ctx: Context): unknown {
  if (!page.query) return {};
  const given = Object.fromEntries(Object.entries(ctx.query).filter(([, v]) => typeof v === 'string' && v !== ''));
  const parsed = page.query.safeParse(given);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new AppError('invalid_request', 'The page was asked for with a filter it does not understand', { details });
  }
  return parsed.data;
}

async function servePage(route: ConsolePage, ctx: Context, deps: AppDeps, viewer: ConsoleViewer): Promise<void> {
  const page = await route.render({
    deps,
    ctx,
    params: ctx.params,
    query: queryOf(route, ctx),
    viewer,
    notice: takeNotice(ctx, servedOverHttps(ctx, deps.config)),
  });
  sendPage(ctx, page);
}

async function serveExport(route: ConsoleExport, ctx: Context, deps: AppDeps): Promise<void> {
  const query = queryOf(route, ctx);
  ctx.status = 200;
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="${route.filename}"`);
  const rows = route.rows({ deps, query });
  // Streamed: every row, never the whole list in memory (C-4). Koa streams a Readable, not a bare
  // async generator (that it would answer as JSON, `{}`).
  ctx.body = Readable.from(
    (async function* () {
      yield CSV_BOM + csvLine(route.header);
      for await (const row of rows) yield csvLine(row);
    })(),
  );
}

async function serveAction(route: ConsoleAction, ctx: Context, deps: AppDeps, viewer: ConsoleViewer): Promise<void> {
  const form = checkedForm(ctx);
  const pageWith = (state: FormState) => route.page.render({ deps, ctx, params: ctx.params, query: {}, viewer, state });
  try {
    const actor = {
      type: 'user' as const,
      userId: viewer.userId,
      email: viewer.email,
      requestId: ctx.state.requestId ?? null,
      ip: ctx.ip,
    };
    const run = () => route.run({ deps, ctx, params: ctx.params, form, viewer, actor });
    const token = route.oneTime && typeof form._once === 'string' ? form._once : undefined;
    const done =
      token && FORM_TOKEN_PATTERN.test(token)
        ? await oncePerFormToken(deps.db, viewer.userId, token, run).then(replayNotice)
        : await run();
    if ('again' in done)
      sendPage(ctx, await pageWith({ name: route.form, values: done.again, confirming: done.confirming }));
    else redirectWithNotice(ctx, servedOverHttps(ctx, deps.config), done.redirect, done.notice);
  } catch (error) {
    if (!(error instanceof AppError) || errorStatus[error.code] >= 500) throw error;
    sendPage(
      ctx,
      withRefusal(error, await pageWith({ name: route.form, error, values: form })),
      errorStatus[error.code],
    );
  }
}

/** A resubmitted form answers its first result, saying that nothing new was recorded (C-13). */
const replayNotice = (r: ActionDone & { replayed?: boolean }): ActionDone =>
  'redirect' in r && r.replayed
    ? { redirect: r.redirect, notice: `${r.notice} This form had already been submitted: nothing new was recorded.` }
    : r;

function mount(router: Router, deps: AppDeps, route: ConsoleRoute): void {
  const handler = async (ctx: Context) => {
    const viewer = await viewerOf(ctx, deps);
    if (!viewer) return;
    if (route.kind === 'page') await servePage(route, ctx, deps, viewer);
    else if (route.kind === 'export') await serveExport(route, ctx, deps);
    else await serveAction(route, ctx, deps, viewer);
  };
  if (route.kind === 'action') router.post(route.path, handler);
  else router.get(route.path, handler);
}

export function consoleMiddleware(deps: AppDeps): Middleware {
  const router = new Router();
  router.get('/', (ctx) => ctx.redirect('/admin'));
  router.get('/admin/assets/console.css', async (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = await readFile(STYLESHEET);
  });
  for (const route of loginRoutes(deps)) route(router);
  for (const route of consolePages) mount(router, deps, route);
  const routes = router.routes();

  const serve = async (ctx: Context) => {
    consoleHeaders(ctx);
    try {
      if (ctx.method === 'POST' && ctx.path !== LOGIN_PATH) await requireCsrf(ctx);
      await routes(ctx as Parameters<typeof routes>[0], async () => {
        // An unknown URL is still a console URL: without a session it leads to the login page (C-1).
        if (await viewerOf(ctx, deps)) throw new AppError('not_found', `No console page at ${ctx.path}`);
      });
    } catch (error) {
      const known = error instanceof AppError ? error : undefined;
      if (!known) requestLog(ctx, deps.logger).error({ err: error }, 'console page failed');
      await sendErrorPage(
        ctx,
        deps,
        known ?? new AppError('internal_error', 'Something went wrong on our side; the error is logged'),
      );
    }
  };
  // Not an async function itself: an API request passes through without a promise of its own (issue 20).
  return (ctx: Context, next: Next) => {
    const path = ctx.path;
    return path === '/' || path === '/admin' || path.startsWith('/admin/') ? serve(ctx) : next();
  };
}
