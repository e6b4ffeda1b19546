import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { AppError } from '../errors.ts';

/*
 * @koa/router tests every route's regular expression on every request and composes a fresh middleware chain
 * for the ones that match. This dispatcher keeps @koa/router's layers (their path syntax, matching and
 * parameter decoding stay the library's) but looks at the few routes that share the request's first two path
 * segments, and runs a chain composed once per route. The first route that matches method and path answers,
 * as with @koa/router: no chain of ours calls next() after its handler.
 */

type Layer = Router['stack'][number];

interface Entry {
  index: number;
  layer: Layer;
  path: string;
  methods: Set<string>;
  run: Step;
}

/** A literal path segment, not a parameter, wildcard or optional group. */
const LITERAL = /^[A-Za-z0-9._~-]*$/;

/** The bucket of a path: its first two segments, lower-cased (matching is case-insensitive); '' for a missing one. */
function bucketKey(path: string): string {
  const first = path.indexOf('/', 1);
  if (first === -1) return `${path.slice(1)}/`.toLowerCase();
  const second = path.indexOf('/', first + 1);
  return (second === -1 ? path.slice(1) : path.slice(1, second)).toLowerCase();
}

/** The bucket a route's path belongs to, or undefined when its first two segments are not both literal. */
function routeBucket(path: string): string | undefined {
  const [, first = '', second = ''] = path.split('/');
  if (!LITERAL.test(first) || !LITERAL.test(second)) return undefined;
  return `${first}/${second}`.toLowerCase();
}

/** The fields of a matched request that @koa/router sets and this service reads. */
type RoutedContext = Context & {
  request: { params: Record<string, string> };
  params: Record<string, string>;
  routerPath: string;
  _matchedRoute: string;
};

type Step = (ctx: Context, next: Next) => Promise<unknown>;

/** A route's middleware as one function, built once (what koa-compose does, without its per-call checks). */
function composeOnce(middleware: Middleware[]): Step {
  return middleware.reduceRight<Step>(
    (after, step) => (ctx, next) => {
      try {
        return Promise.resolve(step(ctx, () => after(ctx, next)));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    (_ctx, next) => next(),
  );
}

const NONE: Entry[] = [];

/** The order `Allow` lists methods in (RFC 9110 sets none; one order keeps the header the same for a path). */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * A known path asked with a method none of its routes takes: 405 with `Allow` (RFC 9110 15.5.6), in the error
 * shape of every other refusal, rather than a 404 that says the path does not exist. Nothing of the request is read.
 */
function methodNotAllowed(method: string, matching: Entry[]): AppError {
  const methods = new Set(matching.flatMap((entry) => [...entry.methods]));
  const allow = METHOD_ORDER.filter((m) => methods.has(m)).join(', ');
  return new AppError('method_not_allowed', `${method} is not allowed here; allowed: ${allow}`, {
    headers: { Allow: allow },
  });
}

/**
 * The router's routes as one Koa middleware; a request whose path no route matches goes on to `next`, one whose path
 * matches under other methods only is refused with 405.
 */
export function dispatchRoutes(router: Router): Middleware {
  const buckets = new Map<string, Entry[]>();
  // Routes whose start is not literal are tried for every request, in their place among the others.
  const anywhere: Entry[] = [];
  router.stack.forEach((layer, index) => {
    if (layer.methods.length === 0 || typeof layer.path !== 'string')
      throw new Error(`dispatchRoutes: ${String(layer.path)} is not a route with a path`);
    const entry: Entry = {
      index,
      layer,
      path: layer.path,
      methods: new Set(layer.methods),
      run: composeOnce(layer.stack as Middleware[]),
    };
    const key = routeBucket(layer.path);
    if (key === undefined) anywhere.push(entry);
    else buckets.set(key, [...(buckets.get(key) ?? []), entry]);
  });
  const candidatesOf = (path: string): Entry[] => {
    const bucket = buckets.get(bucketKey(path)) ?? NONE;
    return anywhere.length === 0 ? bucket : [...bucket, ...anywhere].sort((a, b) => a.index - b.index);
  };
  return (ctx: Context, next: Next) => {
    const path = ctx.path;
    const candidates = candidatesOf(path);
    for (const entry of candidates) {
      if (!entry.methods.has(ctx.method) || !entry.layer.match(path)) continue;
      const layer = entry.layer;
      const params = layer.params(path, layer.captures(path));
      // What @koa/router sets and we read: the decoded parameters, and the route's path (metrics' label).
      const routed = ctx as RoutedContext;
      routed.request.params = params;
      routed.params = params;
      routed.routerPath = entry.path;
      routed._matchedRoute = entry.path;
      return entry.run(ctx, next);
    }
    // Only when no route answers: the matching is done again for the request that is refused anyway.
    const matching = candidates.filter((entry) => entry.layer.match(path));
    if (matching.length > 0) return Promise.reject(methodNotAllowed(ctx.method, matching));
    return next();
  };
}
