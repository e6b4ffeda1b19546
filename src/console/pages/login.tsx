import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../../app-deps.ts';
import { isAdmin, login, logoutByToken } from '../../auth/service.ts';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from '../../auth/session-cookie.ts';
import { AppError } from '../../errors.ts';
import { errorStatus } from '../../http/error-status.ts';
import { servedOverHttps } from '../../http/cookies.ts';
import { signInCsrfToken, signInCsrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form.ts';
import { sendPage } from '../http/render.ts';

/**
 * Sign-in checks its form's token itself (a refusal shows the form again); every other console POST is checked before
 * routing.
 */
export const LOGIN_PATH = '/admin/login';

/** A stand-in origin to resolve `next` against: what resolves to another origin was never a local path. */
const HERE = 'http://console.invalid';

const inConsole = (url: URL) =>
  url.origin === HERE && (url.pathname === '/admin' || url.pathname.startsWith('/admin/'));

/**
 * C-2: only a local console path is a place to go back to; anything else goes to the overview. `next` is
 * resolved as a browser resolves it (dot segments, `%2e%2e`, backslashes, `//host`), and once more after
 * decoding, since a proxy or server on the way may decode `%2f` before it resolves `..`; both must stay
 * under /admin. The resolved path is what the browser is sent to.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/')) return '/admin';
  try {
    const url = new URL(next, HERE);
    return inConsole(url) && inConsole(new URL(decodeURIComponent(url.pathname), HERE))
      ? `${url.pathname}${url.search}`
      : '/admin';
  } catch {
    // A malformed escape (`%zz`) names no path we can vouch for.
    return '/admin';
  }
}

function LoginPage({ csrf, next, email, error }: { csrf: string; next: string; email?: string; error?: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in · Billing console</title>
        <link rel="stylesheet" href="/admin/assets/console.css" />
      </head>
      <body>
        <main class="narrow">
          <h1>Sign in</h1>
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <form method="post" action={LOGIN_PATH} class="form">
            <input type="hidden" name="_csrf" value={csrf} />
            <input type="hidden" name="next" value={next} />
            <p class="field">
              <label for="email">Email</label>
              <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ''} />
            </p>
            <p class="field">
              <label for="password">Password</label>
              <input id="password" name="password" type="password" autocomplete="current-password" required />
            </p>
            <button type="submit">Sign in</button>
          </form>
        </main>
      </body>
    </html>
  );
}

/** C-2: the sign-in form and sign-out, on the API's session model (same cookie, throttling, IdP and roles). */
export function loginRoutes(deps: AppDeps): ((router: Router) => void)[] {
  const https = (ctx: Context) => servedOverHttps(ctx, deps.config);
  const show = (ctx: Context, props: { next: string; email?: string; error?: string }, status = 200) =>
    sendPage(ctx, LoginPage({ csrf: signInCsrfToken(ctx, https(ctx)), ...props }), status);
  return [
    (router) => router.get(LOGIN_PATH, (ctx) => show(ctx, { next: safeNext(ctx.query.next) })),
    (router) =>
      router.post(LOGIN_PATH, async (ctx) => {
        const form = await readForm(ctx);
        const next = safeNext(form.next);
        if (!signInCsrfValid(ctx, https(ctx), form._csrf))
          return show(ctx, { next, error: 'The form has expired: please sign in again.' }, 403);
        const email = field(form, 'email') ?? '';
        try {
          const result = await login(
            deps.db,
            {
              email,
              password: typeof form.password === 'string' ? form.password : '',
              ip: ctx.ip,
              userAgent: ctx.get('user-agent') || null,
            },
            deps.config,
          );
          if (!isAdmin(result.user)) {
            await logoutByToken(deps.db, result.token);
            return show(ctx, { next, email, error: 'This account is not an admin.' }, 403);
          }
          setSessionCookie(ctx, result.token, result.expiresAt, https(ctx));
          ctx.status = 303;
          ctx.redirect(next);
        } catch (error) {
          if (!(error instanceof AppError) || errorStatus[error.code] >= 500) throw error;
          show(ctx, { next, email, error: error.message }, errorStatus[error.code]);
        }
      }),
    (router) =>
      // Its token is checked before routing, as every console POST's (router.ts, requireCsrf).
      router.post('/admin/logout', async (ctx) => {
        const token = readSessionCookie(ctx);
        if (token) await logoutByToken(deps.db, token);
        clearSessionCookie(ctx, https(ctx));
        ctx.status = 303;
        ctx.redirect('/admin/login');
      }),
  ];
}
