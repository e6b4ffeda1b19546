/**
 * Signing in to the portal (P-1, P-2): the one-time link, the email form, the code form, logout. The email form
 * answers the same page for any address (the lookup is the job's, portal/sign-in.ts). Forms before a session carry
 * the console's sign-in token (a double-submit cookie); logout the session's token.
 */
import type { Context } from 'koa';
import type { ComponentChildren } from 'preact';
import type { AppDeps } from '../app-deps.ts';
import { signInCsrfToken, signInCsrfValid } from '../console/http/csrf.ts';
import { isEmailAddress } from '../customers/schema.ts';
import { readForm, typedField } from '../console/http/form.ts';
import { sendPage } from '../console/http/render.ts';
import { AppError } from '../errors.ts';
import { clearCookie, servedOverHttps, setCookie } from '../http/cookies.ts';
import { isPortalPagePath } from '../portal/schema.ts';
import { endPortalSession, redeemPortalLink, type NewPortalSession } from '../portal/sessions.ts';
import { CODE_TTL_MINUTES, requestPortalCode, signInWithCode } from '../portal/sign-in.ts';
import { companyDetails } from '../settings/company.ts';
import { PublicLayout } from './layout.tsx';
import { mayAskForCode, mayCheckCode } from './limits.ts';

export const PORTAL_COOKIE = 'portal_session';

export const readPortalCookie = (ctx: Context) => ctx.cookies.get(PORTAL_COOKIE) || undefined;

/** The page a signed-out browser asked for, opened once it signs in with a code (a deep link from an email). */
const WANTED_COOKIE = 'portal_wanted';
const WANTED_TTL_MS = 60 * 60 * 1000;

export function rememberWantedPage(ctx: Context, deps: AppDeps): void {
  if (ctx.method !== 'GET' || ctx.path === '/portal' || !isPortalPagePath(ctx.path)) return;
  const https = servedOverHttps(ctx, deps.config);
  setCookie(ctx, WANTED_COOKIE, ctx.path, { https, sameSite: 'Lax', expires: new Date(Date.now() + WANTED_TTL_MS) });
}

function takeWantedPage(ctx: Context, deps: AppDeps): string | undefined {
  const wanted = ctx.cookies.get(WANTED_COOKIE);
  if (wanted === undefined) return undefined;
  clearCookie(ctx, WANTED_COOKIE, { https: servedOverHttps(ctx, deps.config), sameSite: 'Lax' });
  return isPortalPagePath(wanted) ? wanted : undefined;
}

/** Signed in: the cookie, then 303 to the page the link or the sign-in was for, else the overview (P-1). */
function signedIn(ctx: Context, deps: AppDeps, session: NewPortalSession, page = session.path): void {
  const https = servedOverHttps(ctx, deps.config);
  setCookie(ctx, PORTAL_COOKIE, session.token, { https, sameSite: 'Lax', expires: session.expiresAt });
  ctx.status = 303;
  ctx.redirect(page ?? '/portal');
}

function EmailForm({ csrf, email }: { csrf: string; email: string }) {
  return (
    <form method="post" action="/portal/login" class="form">
      <input type="hidden" name="_csrf" value={csrf} />
      <p class="field">
        <label for="login-email">Email</label>
        <input id="login-email" name="email" type="email" value={email} required autocomplete="email" />
      </p>
      <button type="submit">Email me a sign-in code</button>
    </form>
  );
}

function CodeForm({ csrf, email, problem }: { csrf: string; email: string; problem?: string | undefined }) {
  return (
    <form method="post" action="/portal/login/code" class="form">
      <input type="hidden" name="_csrf" value={csrf} />
      {problem ? (
        <div class="error" id="refused" role="alert">
          <p>
            <strong>{problem}</strong>
          </p>
        </div>
      ) : null}
      <p class="field">
        <label for="code-email">Email</label>
        <input id="code-email" name="email" type="email" value={email} required autocomplete="email" />
      </p>
      <p class="field">
        <label for="code-code">Code</label>
        <input
          id="code-code"
          name="code"
          inputmode="numeric"
          pattern="[0-9]{6}"
          maxlength={6}
          required
          autocomplete="one-time-code"
        />
      </p>
      <button type="submit">Sign in</button>
    </form>
  );
}

async function page(ctx: Context, deps: AppDeps, title: string, body: ComponentChildren, status = 200) {
  const company = await companyDetails(deps.db);
  sendPage(
    ctx,
    <PublicLayout title={title} companyName={company.name}>
      <section class="card">
        <h1>{title}</h1>
        {body}
      </section>
    </PublicLayout>,
    status,
  );
}

const csrfOf = (ctx: Context, deps: AppDeps) => signInCsrfToken(ctx, servedOverHttps(ctx, deps.config));

export async function showLogin(ctx: Context, deps: AppDeps, problem?: string, status = 200): Promise<void> {
  await page(
    ctx,
    deps,
    'Sign in',
    <>
      {problem ? (
        <p class="notice" role="alert">
          {problem}
        </p>
      ) : null}
      <p>Enter the email address your invoices are sent to: we email you a 6-digit code.</p>
      <EmailForm csrf={csrfOf(ctx, deps)} email="" />
      <p>
        <a href="/portal/login/code">I already have a code</a>
      </p>
    </>,
    status,
  );
}

export async function showCodeForm(ctx: Context, deps: AppDeps, email = '', problem?: string, status = 200) {
  await page(
    ctx,
    deps,
    'Enter your code',
    <>
      {email ? (
        <p id="code-sent">
          {`If ${email} is the address of an account, we have emailed it a 6-digit code. ` +
            `It works for ${CODE_TTL_MINUTES} minutes.`}
        </p>
      ) : null}
      <CodeForm csrf={csrfOf(ctx, deps)} email={email} problem={problem} />
      <p>
        <a href="/portal/login">Send me a new code</a>
      </p>
    </>,
    status,
  );
}

/** A sign-in form's fields, after its token; a forged or stale form is refused (403) before anything runs. */
async function signInForm(ctx: Context, deps: AppDeps) {
  const form = await readForm(ctx);
  if (!signInCsrfValid(ctx, servedOverHttps(ctx, deps.config), form._csrf))
    throw new AppError('forbidden', 'The form has expired: reload the page and try again');
  return { email: typedField(form, 'email') ?? '', code: typedField(form, 'code') ?? '' };
}

/** `POST /portal/login`: the same page for every address (P-2). */
export async function askForCode(ctx: Context, deps: AppDeps): Promise<void> {
  const { email } = await signInForm(ctx, deps);
  // Not an address at all: said at once (no customer can have it, so the answer tells nothing of who exists).
  if (!isEmailAddress(email.trim()))
    return showLogin(ctx, deps, 'Enter the email address your invoices are sent to, such as name@example.com.', 400);
  if (!(await mayAskForCode(ctx, deps, email)))
    return showLogin(ctx, deps, 'Too many sign-in codes were asked for: wait a few minutes, then try again.', 429);
  await requestPortalCode(deps.db, email);
  await showCodeForm(ctx, deps, email.trim());
}

/** `POST /portal/login/code`: a right code signs in (303 to /portal); anything else the same refusal. */
export async function checkCode(ctx: Context, deps: AppDeps): Promise<void> {
  const { email, code } = await signInForm(ctx, deps);
  if (!(await mayCheckCode(ctx, deps)))
    return showCodeForm(ctx, deps, '', 'Too many tries: wait a few minutes, then try again.', 429);
  try {
    const session = await signInWithCode(deps.db, email, code);
    signedIn(ctx, deps, session, takeWantedPage(ctx, deps));
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'unauthenticated') throw error;
    await showCodeForm(ctx, deps, '', error.message, 401);
  }
}

/** `GET /portal/s/<token>` (P-1): the link signs in once; a used, expired or unknown link is a page saying so. */
export async function openLink(ctx: Context, deps: AppDeps, token: string): Promise<void> {
  // A HEAD (a mail scanner, a link checker) does not use up the link: only a browser's GET signs in.
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    return;
  }
  try {
    signedIn(ctx, deps, await redeemPortalLink(deps.db, token));
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
    await page(
      ctx,
      deps,
      'This link no longer works',
      <>
        <p>This sign-in link was already used, has expired (links work for an hour) or is not valid.</p>
        <p>
          <a href="/portal/login">Sign in with your email</a>
        </p>
      </>,
      404,
    );
  }
}

/** `POST /portal/logout` (its session's token checked before): the session ends and the cookie goes. */
export async function logout(ctx: Context, deps: AppDeps): Promise<void> {
  await endPortalSession(deps.db, readPortalCookie(ctx));
  clearCookie(ctx, PORTAL_COOKIE, { https: servedOverHttps(ctx, deps.config), sameSite: 'Lax' });
  ctx.status = 303;
  ctx.redirect('/portal/login');
}
