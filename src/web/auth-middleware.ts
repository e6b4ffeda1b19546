import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { authenticateApiKey } from '../api-keys/service.ts';
import { authenticateAdminSession } from '../auth/service.ts';
import { readSessionCookie } from '../auth/session-cookie.ts';
import { secretsEqual } from '../crypto/tokens.ts';
import { AppError } from '../errors.ts';
import type { AuthKind } from '../http/route.ts';

const unauthenticated = (message: string) => new AppError('unauthenticated', message);

function bearerToken(ctx: Context): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return match?.[1];
}

async function adminSession(ctx: Context, deps: AppDeps): Promise<void> {
  const session = await authenticateAdminSession(deps.db, readSessionCookie(ctx));
  ctx.state.principal = {
    kind: 'user',
    userId: session.user_id,
    email: session.email,
    role: session.role,
    sessionId: session.session_id,
  };
}

async function apiKey(ctx: Context, deps: AppDeps): Promise<void> {
  // A session cookie is not a credential here (D-15): only the bearer key counts.
  const token = bearerToken(ctx);
  if (!token) throw unauthenticated('Send an API key as Authorization: Bearer <key>');
  const key = await authenticateApiKey(deps.db, token);
  if (!key) throw unauthenticated('Unknown, revoked or expired API key');
  ctx.state.principal = { kind: 'apiKey', ...key };
}

function cron(ctx: Context, deps: AppDeps): void {
  const expected = deps.config.CRON_SECRET;
  const given = ctx.get('x-cron-secret');
  if (!expected || !given || !secretsEqual(given, expected))
    throw new AppError('invalid_cron_secret', 'Missing or wrong X-Cron-Secret');
}

/**
 * The credential check for one auth kind (interface.md, Authentication), run before the body is read (D-95). It
 * sets `ctx.state.principal`; an admin route's session is checked here and nowhere else.
 */
export function authenticate(kind: AuthKind, deps: AppDeps): Middleware {
  if (kind === 'admin') {
    return async (ctx: Context, next: Next) => {
      await adminSession(ctx, deps);
      await next();
    };
  }
  if (kind === 'apiKey') {
    return async (ctx: Context, next: Next) => {
      await apiKey(ctx, deps);
      await next();
    };
  }
  return (ctx: Context, next: Next) => {
    if (kind === 'cron') cron(ctx, deps);
    else ctx.state.principal = { kind: 'anonymous' };
    return next();
  };
}
