import type { Context, Middleware, Next } from 'koa';
import type { AppDeps } from '../app-deps.ts';
import { sha256Hex } from '../crypto/tokens.ts';
import { errorBody, errorStatus } from '../http/error-status.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../http/principal.ts';
import { IDEMPOTENCY_KEY_RULE, idempotencyKey } from './key.ts';
import { findStoredResponse, storeResponse, tryLockKey } from './repo.ts';

const REPLAYED_HEADERS = ['location', 'link', 'retry-after'];

function scopeOf(principal: Principal | undefined): string {
  if (principal?.kind === 'user') return `user:${principal.userId}`;
  if (principal?.kind === 'apiKey') return `key:${principal.apiKeyId}`;
  return 'anonymous';
}

function requestHash(ctx: Context): string {
  return sha256Hex(Buffer.concat([Buffer.from(`${ctx.method} ${ctx.path}\n`), ctx.state.rawBody ?? Buffer.alloc(0)]));
}

function keptHeaders(ctx: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) out[name] = String(value);
  }
  return out;
}

/**
 * A digest of (caller, Idempotency-Key, request) while a keyed request runs, else undefined: what a service
 * sends on to a provider as its own idempotency key, so the same request retried after an unknown outcome (a
 * 5xx is not stored, so it runs again) asks the provider for the same thing again rather than for a second one.
 */
export function requestIntent(ctx: Context): string | undefined {
  return ctx.state.requestIntent as string | undefined;
}

/**
 * D-6. The request runs in one transaction with the record of its response, so a crash can never
 * leave work done without its record (a retry would repeat it) or a record without the work.
 * A 4xx answer is stored too (its writes roll back to a savepoint); a 5xx stores nothing, so the
 * client may retry. While one request holds the key, a concurrent one gets 409 request_in_progress.
 */
export function idempotency(deps: AppDeps): Middleware {
  return async (ctx: Context, next: Next) => {
    const key = ctx.get('idempotency-key');
    if (!key) return next();
    if (!idempotencyKey.safeParse(key).success) {
      throw new AppError('invalid_request', `Idempotency-Key ${IDEMPOTENCY_KEY_RULE}`, {
        details: [{ path: 'Idempotency-Key', message: IDEMPOTENCY_KEY_RULE }],
      });
    }
    const scope = scopeOf(ctx.state.principal as Principal | undefined);
    const hash = requestHash(ctx);
    let refusal: AppError | undefined;

    await deps.db.transaction(async (trx) => {
      if (!(await tryLockKey(trx, scope, key))) {
        throw new AppError('request_in_progress', 'A request with this Idempotency-Key is still in progress');
      }
      const stored = await findStoredResponse(trx, scope, key);
      if (stored) {
        if (stored.request_hash !== hash) {
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request');
        }
        ctx.status = stored.response_status;
        // Parsed and sent again: JSON.stringify gives back the very text it was stored from.
        if (stored.response_body !== null) ctx.body = JSON.parse(stored.response_body);
        for (const [name, value] of Object.entries(stored.response_headers ?? {})) ctx.set(name, value);
        ctx.set('Idempotent-Replayed', 'true');
        return;
      }
      try {
        await trx.transaction(async (savepoint) => {
          ctx.state.db = savepoint;
          ctx.state.requestIntent = sha256Hex(`${scope}\n${key}\n${hash}`);
          await next();
        });
      } catch (error) {
        if (!(error instanceof AppError) || errorStatus[error.code] >= 500) throw error;
        refusal = error;
        await storeResponse(trx, scope, key, hash, errorStatus[error.code], errorBody(error), error.headers ?? {});
        return;
      } finally {
        ctx.state.db = undefined;
        ctx.state.requestIntent = undefined;
      }
      await storeResponse(trx, scope, key, hash, ctx.status, ctx.state.replayBody ?? ctx.body, keptHeaders(ctx));
    });
    if (refusal) throw refusal;
  };
}
