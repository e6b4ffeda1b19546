import http from 'node:http';
import https from 'node:https';
import { checkDestination, pinnedLookup } from './destination.ts';

/** D-72: a receiver has this long to answer. */
export const DELIVERY_TIMEOUT_MS = 5000;
/** Attempts keep at most this much of the response body. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseBody: string | null;
  retryAfter: string | undefined;
}

/**
 * POSTs `body` to `url` once. Never follows redirects (a 3xx is a failure). Unless private destinations
 * are allowed, the host is resolved and checked now and the socket connects to that checked address, so a
 * DNS answer that changes between check and connect cannot reach an internal address.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs?: number },
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const failure = (error: string, statusCode: number | null = null): SendOutcome => ({
    ok: false, statusCode, latencyMs: elapsed(), error, responseBody: null, retryAfter: undefined,
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return failure('invalid url');
  }
  let lookup: ReturnType<typeof pinnedLookup> | undefined;
  if (!options.allowPrivate) {
    try {
      lookup = pinnedLookup(await checkDestination(target));
    } catch (error) {
      return failure(`destination refused: ${(error as Error).message}`);
    }
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    // One fresh connection per attempt (no keep-alive pool): every attempt connects to the address checked for it.
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'billing-webhooks/1' },
      agent: false,
      lookup,
    });
    const timer = setTimeout(() => finish(failure(`timeout after ${timeoutMs} ms`)), timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => finish(failure(error.code ? `${error.code}: ${error.message}` : error.message)));
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
        const ok = statusCode >= 200 && statusCode < 300;
        let error: string | null = null;
        if (statusCode >= 300 && statusCode < 400) error = `redirect (${statusCode}${response.headers.location ? ` to ${response.headers.location}` : ''}) not followed`;
        else if (!ok) error = `HTTP ${statusCode}`;
        const retryAfter = response.headers['retry-after'];
        finish({ ok, statusCode, latencyMs: elapsed(), error, responseBody: text, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_BODY_LIMIT) done();
      });
      response.on('end', done);
      response.on('error', (error) => finish(failure(`response: ${error.message}`, statusCode)));
    });
    request.end(body);
  });
}
