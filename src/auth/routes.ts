import { defineRoute } from '../http/route.ts';
import { loginBody, loginResponse } from './schema.ts';
import { login, logout } from './service.ts';
import { clearSessionCookie, setSessionCookie } from './session-cookie.ts';

export const authRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/auth/login',
    auth: 'public',
    tag: 'Auth',
    summary: 'Log in; sets the HTTP-only `session` cookie',
    body: loginBody,
    responses: { 200: { description: 'Logged in', schema: loginResponse }, 401: { description: 'invalid_credentials' }, 429: { description: 'rate_limited' } },
    handler: async ({ deps, body, ctx }) => {
      const result = await login(deps.db, { email: body.email, password: body.password, ip: ctx.ip, userAgent: ctx.get('user-agent') || null });
      setSessionCookie(ctx, result.token, result.expiresAt, deps.config.NODE_ENV === 'production');
      return { status: 200, body: { user: result.user } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/auth/logout',
    auth: 'admin',
    tag: 'Auth',
    summary: 'Log out; the session is deleted server-side',
    idempotent: false,
    responses: { 204: { description: 'Logged out' } },
    handler: async ({ deps, principal, ctx }) => {
      if (principal.kind === 'user') await logout(deps.db, principal.sessionId);
      clearSessionCookie(ctx, deps.config.NODE_ENV === 'production');
      return { status: 204 };
    },
  }),
];
