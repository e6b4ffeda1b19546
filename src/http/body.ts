import type { Context, Next } from 'koa';
import { AppError } from '../errors.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

declare module 'koa' {
  interface DefaultState {
    /** The exact request bytes, kept for signature checks. */
    rawBody?: Buffer;
    /** The parsed JSON body, or undefined when there was none. */
    body?: unknown;
  }
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

export async function readLimited(ctx: Context, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      throw new AppError('payload_too_large', `Request body exceeds ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads JSON bodies (1 MiB at most) keeping the raw bytes; refuses other media types (D-1). */
export function jsonBody(ctx: Context, next: Next): Promise<void> {
  // Not async itself: a bodiless request goes on without a promise of its own (issue 20).
  if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'DELETE' || ctx.method === 'OPTIONS') {
    return next();
  }
  return readJsonBody(ctx, next);
}

async function readJsonBody(ctx: Context, next: Next): Promise<void> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > BODY_LIMIT_BYTES) {
    throw new AppError('payload_too_large', `Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
  }
  const raw = await readLimited(ctx, BODY_LIMIT_BYTES);
  ctx.state.rawBody = raw;
  // A declared non-JSON type is refused even with an empty body: that is what a bodiless HTML form sends,
  // and refusing every form is half of the CSRF defence (the other half is the SameSite cookie).
  const contentType = ctx.get('content-type');
  if ((raw.length > 0 || contentType !== '') && !isJson(contentType)) {
    throw new AppError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)');
  }
  if (raw.length === 0) return next();
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_request', 'Request body is not valid JSON');
  }
  // `null` is a JSON value, not the absence of a body: read as none it became `{}` (issue 33: a cron call with
  // `null` ran the sweep, a settings PUT answered 200). No operation takes it, so it is refused here, once.
  if (body === null) throw new AppError('invalid_request', 'Request body must not be null (send no body instead)');
  ctx.state.body = body;
  return next();
}
