import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { recordHttpRequest } from './metrics.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'koa' {
  interface DefaultState {
    requestId?: string;
  }
}

/**
 * The request's logger, a child of `logger` whose lines carry the request id. Made when something logs through
 * it (an error), not on every request: a child costs objects and the redaction of its bindings, and most
 * requests log only their access line.
 */
export function requestLog(ctx: Context, logger: Logger): Logger {
  if (ctx.state.log) return ctx.state.log as Logger;
  const requestId = ctx.state.requestId;
  const log = requestId === undefined ? logger : logger.child({ requestId });
  ctx.state.log = log;
  return log;
}

/** Request id (echoed when the client sent a sane one), one access-log line and metrics. */
export function requestContext(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    // Node's setHeader, not ctx.set (see security-headers.ts setConstantHeaders): nothing is sent yet here.
    ctx.res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      recordHttpRequest(ctx.method, String(route), ctx.status, ms);
      // The same line a child logger would write: the request id follows the base fields.
      if (logger.isLevelEnabled('info'))
        logger.info(
          { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 },
          'request',
        );
    }
  };
}
