/**
 * Every error code a route can answer: the ones its own work declares (`RouteDef.errors`) and the ones
 * that come with its shape, decided here once so that no route has to repeat them. Each rule names the
 * code that throws it; the OpenAPI document and the security tests read the result.
 */
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import { errorStatus } from './error-status.ts';
import { usesIdempotency, type AnyRoute, type AuthKind } from './route.ts';

/**
 * What a caller without the right credential gets (web/auth-middleware.ts). A provider route checks its
 * signature itself (provider-events/verify.ts), but that is what the `provider` kind means.
 */
const AUTH_ERRORS: Record<AuthKind, ErrorCode[]> = {
  admin: ['unauthenticated', 'forbidden'],
  apiKey: ['unauthenticated'],
  cron: ['invalid_cron_secret'],
  provider: ['invalid_signature'],
  public: [],
};

/** web/error-middleware.ts: any request can meet a bug or a database that is down. */
const ANY_ROUTE: ErrorCode[] = ['internal_error', 'unavailable'];

/** body.ts reads every POST and PUT, whether or not the route takes a body: size, media type, JSON syntax. */
const READS_BODY: ErrorCode[] = ['payload_too_large', 'unsupported_media_type', 'invalid_request'];

/** idempotency/middleware.ts (D-6): a malformed key, a key reused with another request, a key still running. */
const IDEMPOTENT: ErrorCode[] = ['invalid_request', 'idempotency_key_reused', 'request_in_progress'];

/**
 * Whether a route without a query (or body) schema refuses a query string (or a body's fields): D-90, unknown fields
 * are refused. A provider's webhook does not: its URL and its signed body are the provider's, read by the route itself.
 */
export function refusesUnknownInput(route: AnyRoute): boolean {
  return route.auth !== 'provider';
}

/** The codes a route answers because of its shape alone, whatever its handler does. */
export function plumbingErrors(route: AnyRoute): ErrorCode[] {
  const codes = [...ANY_ROUTE, ...AUTH_ERRORS[route.auth]];
  // web/router.ts: a malformed path parameter names nothing (404, D-1); a bad query string is a 400.
  if (route.params) codes.push('not_found');
  if (route.query || refusesUnknownInput(route)) codes.push('invalid_request');
  if (route.method === 'post' || route.method === 'put') codes.push(...READS_BODY);
  if (usesIdempotency(route)) codes.push(...IDEMPOTENT);
  return codes;
}

/** Every code the route can answer, once each, in the order of the closed list. */
export function routeErrors(route: AnyRoute): ErrorCode[] {
  const codes = new Set([...plumbingErrors(route), ...route.errors]);
  return ERROR_CODES.filter((code) => codes.has(code));
}

/** routeErrors by the HTTP status each code answers with (error-status.ts). */
export function routeErrorsByStatus(route: AnyRoute): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(route))
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  return byStatus;
}
