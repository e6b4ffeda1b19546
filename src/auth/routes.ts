import { defineRoute } from '../http/route.ts';
import { AppError } from '../errors.ts';
import { servedOverHttps } from '../http/cookies.ts';
import { loginBody, loginResponse } from './schema.ts';
import { login, logoutByToken } from './service.ts';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from './session-cookie.ts';

export const authRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/auth/login',
    auth: 'public',
    tag: 'Auth',
    summary: 'Log in; sets the HTTP-only `session` cookie',
    body: loginBody,
    responses: {
      200: { description: 'Logged in', schema: loginResponse },
      401: { description: 'invalid_credentials' },
      403: { description: 'forbidden (identity provider: an unverified email of an existing account)' },
      429: { description: 'rate_limited' },
      502: { description: 'identity_provider_error' },
    },
    errors: ['invalid_credentials', 'forbidden', 'rate_limited', 'identity_provider_error'],
    handler: async ({ deps, body, ctx }) => {
      const result = await login(
        deps.db,
        { email: body.email, password: body.password, ip: ctx.ip, userAgent: ctx.get('user-agent') || null },
        deps.config,
      );
      setSessionCookie(ctx, result.token, result.expiresAt, servedOverHttps(ctx, deps.config));
      return { status: 200, body: { user: result.user } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/auth/logout',
    // Not 'admin': any logged-in user, whatever the role, must be able to end their own session.
    // The session cookie is still required; the handler checks it.
    auth: 'public',
    documentedAuth: 'admin',
    tag: 'Auth',
    summary: 'Log out (needs the session cookie, any role); the session is deleted server-side',
    idempotent: false,
    responses: { 204: { description: 'Logged out' }, 401: { description: 'unauthenticated' } },
    errors: ['unauthenticated'],
    handler: async ({ deps, ctx }) => {
      const token = readSessionCookie(ctx);
      if (!token || !(await logoutByToken(deps.db, token)))
        throw new AppError('unauthenticated', 'No live session to log out of');
      clearSessionCookie(ctx, servedOverHttps(ctx, deps.config));
      return { status: 204 };
    },
  }),
];
