import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { authenticateApiKey } from '../api-keys/service.ts';
import { adminOf, adminSessionGate, findSessionByToken } from '../auth/service.ts';
import type { SessionUserRow } from '../auth/repo.ts';
import type { Principal } from './principal.ts';
import { readSessionCookie } from '../auth/session-cookie.ts';
import { secretsEqual } from '../crypto/tokens.ts';
import { AppError } from '../errors.ts';
import type { AuthKind } from './route.ts';

const unauthenticated = (message: string) => new AppError('unauthenticated', message);

function bearerToken(ctx: Context): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return match?.[1];
}

function adminToken(ctx: Context): string {
  const token = readSessionCookie(ctx);
  if (!token) throw unauthenticated('Log in first: no session cookie');
  return token;
}

export function adminPrincipal(session: SessionUserRow): Principal {
  return {
    kind: 'user',
    userId: session.user_id,
    email: session.email,
    role: session.role,
    sessionId: session.session_id,
  };
}

async function adminSession(ctx: Context, deps: AppDeps): Promise<void> {
  ctx.state.principal = adminPrincipal(adminOf(await findSessionByToken(deps.db, adminToken(ctx))));
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
 * The credential check for one auth kind (interface.md, Authentication). With `inFirstRead` (an admin GET or an
 * admin write checked in its statement, see route.ts sessionInFirstRead and sessionInWrite) the cookie is required
 * here and the session is checked inside a statement of the handler's: `ctx.state.sessionGate`.
 */
export function authenticate(kind: AuthKind, deps: AppDeps, inFirstRead = false): Middleware {
  // Only the kinds that read the database wait; the others go on without a promise of their own (issue 20).
  if (kind === 'admin' && !inFirstRead) {
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
    if (kind === 'admin') ctx.state.sessionGate = adminSessionGate(deps.db, adminToken(ctx));
    else if (kind === 'cron') cron(ctx, deps);
    else ctx.state.principal = { kind: 'anonymous' };
    return next();
  };
}
