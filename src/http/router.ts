import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import type { Actor } from '../audit/actor.ts';
import type { AppDeps } from '../app-deps.ts';
import type { AdminSessionGate } from '../auth/service.ts';
import { gatedDb } from '../db/fast-query.ts';
import { adminPrincipal, authenticate } from './auth-middleware.ts';
import { jsonBody } from './body.ts';
import { idempotency } from '../idempotency/middleware.ts';
import { actorOf, type Principal } from './principal.ts';
import { usesIdempotency, type AnyRoute, type HandlerInput, type Reply } from './route.ts';
import { dispatchRoutes } from './route-dispatch.ts';
import { parseOrThrow } from './validate.ts';
import { refusesUnknownInput } from './route-errors.ts';

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
  const run = async (ctx: Context, db: AppDeps['db'], principal: Principal | undefined): Promise<Reply> => {
    // A malformed id in the path names nothing, so it is a 404 rather than a 400 (D-1).
    const params = route.params ? parseOrThrow(route.params, ctx.params, 'params', 'not_found') : undefined;
    const query = route.query ? parseOrThrow(route.query, ctx.query, 'query') : undefined;
    // A route without a query schema names no query field, so any it is sent is unknown (D-90).
    if (!route.query && refusesUnknownInput(route) && ctx.querystring !== '')
      parseOrThrow(NO_FIELDS, ctx.query, 'query');
    const body = route.body ? parseOrThrow(route.body, ctx.state.body ?? {}, 'body') : undefined;
    // Likewise a body sent to a route that takes none (a rotation, a retry): its fields would be ignored, so they are
    // refused.
    if (!route.body && ctx.state.body !== undefined && refusesUnknownInput(route))
      parseOrThrow(NO_FIELDS, ctx.state.body, 'body');
    const input = { params, query, body, deps: db === deps.db ? deps : { ...deps, db }, ctx };
    if (principal)
      return route.handler({ ...input, principal, actor: actorOf(principal, ctx.state.requestId, ctx.ip) });
    if (route.sessionInWrite) {
      const actor: Actor = { type: 'session', requestId: ctx.state.requestId ?? null, ip: ctx.ip ?? null };
      return route.handler(
        Object.defineProperties({ ...input, actor }, { principal: UNSETTLED.principal! }) as HandlerInput<
          unknown,
          unknown,
          unknown
        >,
      );
    }
    return route.handler(Object.defineProperties(input, UNSETTLED) as HandlerInput<unknown, unknown, unknown>);
  };
  const asText = !usesIdempotency(route);
  return async (ctx) => {
    const gate = ctx.state.sessionGate as AdminSessionGate | undefined;
    if (gate) {
      writeReply(ctx, await runGated(gate, () => run(ctx, gatedDb(gate), undefined)), asText);
      ctx.state.principal = adminPrincipal(await gate.settle());
      return;
    }
    const principal = (ctx.state.principal as Principal | undefined) ?? { kind: 'anonymous' };
    // Under an Idempotency-Key the idempotency middleware hands the handler its transaction.
    writeReply(ctx, await run(ctx, (ctx.state.db as AppDeps['db'] | undefined) ?? deps.db, principal), asText);
  };
}

/**
 * The principal and actor of a route whose session is checked in its first read: not known yet, so using them is a bug.
 */
const unsettled = () => {
  throw new Error('a route with sessionInFirstRead used its principal or actor');
};
const UNSETTLED: PropertyDescriptorMap = { principal: { get: unsettled }, actor: { get: unsettled } };

/**
 * Runs a handler whose session check rides in its first statement. Whatever the handler did (it may have failed
 * before any statement, on a malformed id), the session decides first: no live admin session is a 401/403 as
 * without the gate, and only then does the handler's own answer or error count.
 */
async function runGated(gate: AdminSessionGate, work: () => Promise<Reply>): Promise<Reply> {
  let reply: Reply | undefined;
  let failure: { error: unknown } | undefined;
  try {
    reply = await work();
  } catch (error) {
    failure = { error };
  }
  await gate.settle();
  if (failure) throw failure.error;
  return reply!;
}

/**
 * Whether the route's session is checked inside a statement of its own work: an admin GET's first read
 * (sessionInFirstRead), or an admin POST's one write (sessionInWrite), whose audit row names the session's user.
 */
function sessionInStatement(route: AnyRoute): boolean {
  if (route.sessionInFirstRead && (route.method !== 'get' || route.auth !== 'admin'))
    throw new Error(`${route.method} ${route.path}: sessionInFirstRead is for admin GETs`);
  if (route.sessionInWrite && (route.method !== 'post' || route.auth !== 'admin'))
    throw new Error(`${route.method} ${route.path}: sessionInWrite is for admin POSTs`);
  return route.sessionInFirstRead === true || route.sessionInWrite === true;
}

/**
 * The session of a request whose check was to ride in a statement, looked up now (throws 401/403 as the lookup does);
 * its principal set.
 */
async function settleSession(ctx: Context): Promise<void> {
  const gate = ctx.state.sessionGate as AdminSessionGate | undefined;
  if (!gate) return;
  ctx.state.principal = adminPrincipal(await gate.settle());
  ctx.state.sessionGate = undefined;
}

/**
 * The JSON body of a request whose session is still to be checked: a body refused (malformed, too large, not
 * JSON) is answered only after the session, so a request without a live admin session is still a 401/403 whatever
 * its body (D-95), as with the lookup first.
 */
async function bodyBeforeSession(ctx: Context, next: Next): Promise<void> {
  let read = false;
  try {
    await jsonBody(ctx, () => {
      read = true;
      return next();
    });
  } catch (error) {
    if (!read) await settleSession(ctx);
    throw error;
  }
}

/**
 * An Idempotency-Key's record is scoped by the principal and runs the handler in its transaction: the session is looked
 * up first.
 */
function sessionBeforeIdempotency(ctx: Context, next: Next): Promise<void> {
  if (!ctx.get('idempotency-key')) return next();
  return settleSession(ctx).then(next);
}

/**
 * Builds the Koa router from route definitions: credentials first (D-95: a request without them is a 401
 * whatever its body, and its body is never read; a route that checks its session in its write reads the body
 * first but answers as if it had not), then the body, idempotency, parsing and the handler.
 */
export function buildRouter(routes: AnyRoute[], deps: AppDeps): Middleware {
  const router = new Router();
  for (const route of routes) {
    const inWrite = route.sessionInWrite === true;
    const chain: Middleware[] = [
      authenticate(route.auth, deps, sessionInStatement(route)),
      inWrite ? bodyBeforeSession : jsonBody,
    ];
    if (usesIdempotency(route)) chain.push(...(inWrite ? [sessionBeforeIdempotency] : []), idempotency(deps));
    chain.push(routeHandler(route, deps));
    router[route.method](route.path, ...chain);
  }
  return dispatchRoutes(router);
}
