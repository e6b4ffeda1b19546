import type { Context } from 'koa';
import type { z } from 'zod';
import type { AppDeps } from '../app-deps.ts';
import type { Actor } from '../actor.ts';
import type { ErrorCode } from '../errors.ts';
import type { Principal } from './principal.ts';

/**
 * Who may call a route: the admin session cookie, a v1 API key, nobody in particular,
 * the cron secret, or a payment provider (signature checked by the route itself).
 */
export type AuthKind = 'admin' | 'apiKey' | 'public' | 'cron' | 'provider';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** What a handler answers; the router writes it to the response. */
export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** What an Idempotency-Key replay answers instead of `body`, for answers holding a secret shown once. */
  replayBody?: unknown;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface HandlerInput<P, Q, B> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  principal: Principal;
  /** Who acts, for the audit log (C-11): the principal with the request's id and IP. */
  actor: Actor;
  deps: AppDeps;
  /** Escape hatch for the few routes that need transport details (cookies, client IP, raw body). */
  ctx: Context;
}

export interface RouteResponseDoc {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

/** A request header the route reads itself (a provider's signature), for the OpenAPI document. */
export interface RouteHeaderDoc {
  name: string;
  description: string;
  required: boolean;
}

export interface RouteDef<P = undefined, Q = undefined, B = undefined> {
  method: HttpMethod;
  /** Koa path, e.g. `/api/products/:id`. */
  path: string;
  auth: AuthKind;
  tag: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A hand-written reading of the body for a hot route (usage ingestion, issue 35): the schema's output for the
   * bodies it vouches for, undefined for any other, which `body` then parses and refuses as for every route.
   */
  readBody?: (value: unknown) => Infer<B> | undefined;
  /**
   * For the document only: the body of a route that reads its raw body itself (a provider's signed event,
   * checked before it is parsed) and so has no `body` for the router to parse.
   */
  rawBody?: RouteResponseDoc;
  /** For the document only: request headers the route reads itself. */
  headers?: RouteHeaderDoc[];
  /** Documented answers by status, for the OpenAPI document. */
  responses: Record<number, RouteResponseDoc>;
  /**
   * The error codes this route's own work can answer (its service's refusals). Those that come with the
   * route's shape (auth kind, parameters, body, idempotency: `route-errors.ts`) are added there, not here.
   */
  errors: readonly ErrorCode[];
  /**
   * The code a body answers when its only problems are fields its schema does not name (D-90), when not
   * `invalid_request`: PUT /api/settings's unknown keys are `unknown_setting` (D-12). The document states it.
   */
  unknownFieldCode?: ErrorCode;
  /** POSTs of the admin and v1 APIs honour Idempotency-Key unless this is false. */
  idempotent?: boolean;
  /**
   * The credentials the document's `security` states, when the handler checks them itself under a more open
   * auth kind (logout: the session cookie of any role, checked by the handler; `public` to the middleware).
   */
  documentedAuth?: AuthKind;
  handler(input: HandlerInput<P, Q, B>): Promise<Reply>;
}

/** Any route, whatever its schemas: a handler's input types are checked where the route is defined. */
export type AnyRoute = RouteDef<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

/** D-6: POSTs of the admin and v1 APIs honour Idempotency-Key unless the route opts out. */
export function usesIdempotency(route: AnyRoute): boolean {
  return route.method === 'post' && (route.auth === 'admin' || route.auth === 'apiKey') && route.idempotent !== false;
}

/** Declares a route; the identity function exists so TypeScript infers the handler's input types. */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(def: RouteDef<P, Q, B>): AnyRoute {
  return def as AnyRoute;
}
