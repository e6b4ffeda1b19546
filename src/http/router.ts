import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { authenticate } from './auth-middleware.ts';
import { jsonBody } from './body.ts';
import { idempotency } from '../idempotency/middleware.ts';
import { actorOf, type Principal } from './principal.ts';
import { usesIdempotency, type AnyRoute, type Reply } from './route.ts';
import { parseOrThrow } from './validate.ts';

function writeReply(ctx: Context, reply: Reply): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  ctx.status = reply.status ?? (reply.body === undefined ? 204 : 200);
  if (reply.body !== undefined) ctx.body = reply.body;
  if (reply.replayBody !== undefined) ctx.state.replayBody = reply.replayBody;
}

function routeHandler(route: AnyRoute, deps: AppDeps): Middleware {
  return async (ctx) => {
    // A malformed id in the path names nothing, so it is a 404 rather than a 400 (D-1).
    const params = route.params ? parseOrThrow(route.params, ctx.params, 'params', 'not_found') : undefined;
    const query = route.query ? parseOrThrow(route.query, ctx.query, 'query') : undefined;
    const body = route.body ? parseOrThrow(route.body, ctx.state.body ?? {}, 'body') : undefined;
    const principal = (ctx.state.principal as Principal | undefined) ?? { kind: 'anonymous' };
    // Under an Idempotency-Key the idempotency middleware hands the handler its transaction.
    const db = (ctx.state.db as AppDeps['db'] | undefined) ?? deps.db;
    const actor = actorOf(principal, ctx.state.requestId, ctx.ip);
    writeReply(ctx, await route.handler({ params, query, body, principal, actor, deps: { ...deps, db }, ctx }));
  };
}

/**
 * Builds the Koa router from route definitions: credentials first (D-95: a request without them is a 401
 * whatever its body, and its body is never read), then the body, idempotency, parsing and the handler.
 */
export function buildRouter(routes: AnyRoute[], deps: AppDeps): Router {
  const router = new Router();
  for (const route of routes) {
    const chain: Middleware[] = [authenticate(route.auth, deps), jsonBody];
    if (usesIdempotency(route)) chain.push(idempotency(deps));
    chain.push(routeHandler(route, deps));
    router[route.method](route.path, ...chain);
  }
  return router;
}
