import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { AppError } from '../errors.ts';
import { errorBody, errorStatus } from '../http/error-status.ts';
import { requestLog } from '../http/request-context.ts';

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

// pg's and knex's own words for a connection lost or never made; a pooled client that lost its server while idle
// says "not queryable" when it is next used.
const UNAVAILABLE = new RegExp(
  [
    'Connection terminated',
    'Connection ended unexpectedly',
    'is not queryable',
    'timeout exceeded when trying to connect',
    'Timeout acquiring a connection',
    'the database system is (starting up|shutting down)',
  ].join('|'),
);

/** True for failures that mean "the database is not reachable", which answer 503 rather than 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string; name?: string };
  if (e?.code && CONNECTION_ERROR_CODES.has(e.code)) return true;
  if (e?.name === 'KnexTimeoutError') return true;
  return UNAVAILABLE.test(e?.message ?? '');
}

/**
 * The one place errors become responses (D-1): known codes answer as they are; the rest is 503 or 500 without
 * internals.
 */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (caught) {
      let error: AppError;
      if (caught instanceof AppError) {
        error = caught;
      } else if (isDatabaseUnavailable(caught)) {
        requestLog(ctx, logger).error({ err: caught }, 'database unavailable');
        error = new AppError('unavailable', 'The service is temporarily unavailable', {
          headers: { 'Retry-After': '5' },
        });
      } else {
        requestLog(ctx, logger).error({ err: caught }, 'unhandled error');
        error = new AppError('internal_error', 'An internal error occurred');
      }
      ctx.status = errorStatus[error.code];
      ctx.body = errorBody(error);
      for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
    }
  };
}
