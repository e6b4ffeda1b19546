import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { recordHttpRequest } from './metrics.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id (echoed when the client sent a sane one), a child logger, one access-log line and metrics. */
export function requestContext(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const log = logger.child({ requestId });
    ctx.state.log = log;
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      recordHttpRequest(ctx.method, String(route), ctx.status, ms);
      log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
