import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../app-deps.ts';
import { authenticate } from './auth-middleware.ts';
import { jsonBody } from '../http/body.ts';
import { idempotency } from '../idempotency/middleware.ts';
import { actorOf, type Principal } from '../http/principal.ts';
import { usesIdempotency, type AnyRoute, type Reply } from '../http/route.ts';
import { dispatchRoutes } from './route-dispatch.ts';
import { parseOrThrow } from '../http/validate.ts';
import { refusesUnknownInput } from '../http/route-errors.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_FIELDS = z.object({});

/** An object or array Koa would answer as JSON (not a Buffer, stream, Blob or other class instance). */
function isPlainJson(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const proto = Object.getPrototypeOf(body);
  return proto === Object.prototype || proto === null || Array.isArray(body);
}

/**
 * The reply on the context. With `asText` a plain JSON body is serialised here, as Koa would (same type, same
 * JSON.stringify), so that Koa takes its short path for a string: its JSON path probes the body for streams,
 * Blobs and Responses, reads and re-sets the type and sets the length twice (issue 20, read paths). Not for a
 * route under an Idempotency-Key, whose middleware stores the body as an object.
 */
function writeReply(ctx: Context, reply: Reply, asText = false): void {
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
  ctx.status = reply.status ?? (reply.body === undefined ? 204 : 200);
  if (reply.body !== undefined) {
    if (asText && isPlainJson(reply.body) && !ctx.res.hasHeader('Content-Type')) {
      ctx.res.setHeader('Content-Type', JSON_TYPE);
      ctx.body = JSON.stringify(reply.body);
    } else {
      ctx.body = reply.body;
    }
  }
  if (reply.replayBody !== undefined) ctx.state.replayBody = reply.replayBody;
}

function routeHandler(route: AnyRoute, deps: AppDeps): Middleware {
  const asText = !usesIdempotency(route);
  return async (ctx) => {
    // A malformed id in the path names nothing, so it is a 404 rather than a 400 (D-1).
    const params = route.params ? parseOrThrow(route.params, ctx.params, 'params', 'not_found') : undefined;
    const query = route.query ? parseOrThrow(route.query, ctx.query, 'query') : undefined;
    // A route without a query schema names no query field, so any it is sent is unknown (D-90).
    if (!route.query && refusesUnknownInput(route) && ctx.querystring !== '')
      parseOrThrow(NO_FIELDS, ctx.query, 'query');
    const body = route.body
      ? (route.readBody?.(ctx.state.body ?? {}) ??
        parseOrThrow(route.body, ctx.state.body ?? {}, 'body', 'invalid_request', route.unknownFieldCode))
      : undefined;
    // Likewise a body sent to a route that takes none (a rotation, a retry): its fields would be ignored, so they
    // are refused.
    if (!route.body && ctx.state.body !== undefined && refusesUnknownInput(route))
      parseOrThrow(NO_FIELDS, ctx.state.body, 'body');
    const principal = (ctx.state.principal as Principal | undefined) ?? { kind: 'anonymous' };
    // Under an Idempotency-Key the idempotency middleware hands the handler its transaction.
    const db = (ctx.state.db as AppDeps['db'] | undefined) ?? deps.db;
    const reply = await route.handler({
      params,
      query,
      body,
      principal,
      actor: actorOf(principal, ctx.state.requestId, ctx.ip),
      deps: db === deps.db ? deps : { ...deps, db },
      ctx,
    });
    writeReply(ctx, reply, asText);
  };
}

/**
 * Builds the Koa router from route definitions: credentials first (D-95: a request without them is a 401
 * whatever its body, and its body is never read), then the body, idempotency, parsing and the handler.
 */
export function buildRouter(routes: AnyRoute[], deps: AppDeps): Middleware {
  const router = new Router();
  for (const route of routes) {
    const chain: Middleware[] = [authenticate(route.auth, deps), jsonBody];
    if (usesIdempotency(route)) chain.push(idempotency(deps));
    chain.push(routeHandler(route, deps));
    router[route.method](route.path, ...chain);
  }
  return dispatchRoutes(router);
}
