import http from 'node:http';
import https from 'node:https';
import { checkDestination, pinnedLookup, type ResolvedAddress } from './destination.ts';

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

/** Keep-alive pools kept at once (least recently used closed first). */
const MAX_POOLS = 256;
const pools = new Map<string, http.Agent>();

/**
 * The keep-alive pool for one destination: per URL origin *and* checked address, so a pooled connection
 * always goes to an address checked for it (D-73). A host that now resolves elsewhere gets a new pool;
 * the old one idles out.
 */
function poolFor(target: URL, address: ResolvedAddress | undefined): http.Agent {
  const key = `${target.protocol}//${target.host}@${address?.address ?? ''}`;
  let pool = pools.get(key);
  if (pool) {
    pools.delete(key);
  } else {
    const options = { keepAlive: true, scheduling: 'lifo' as const, maxFreeSockets: 64 };
    pool = target.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    if (pools.size >= MAX_POOLS) {
      const [oldest, agent] = pools.entries().next().value!;
      pools.delete(oldest);
      agent.destroy();
    }
  }
  pools.set(key, pool);
  return pool;
}

/** Closes every pooled connection (a stopping worker). */
export function closeWebhookConnections(): void {
  for (const pool of pools.values()) pool.destroy();
  pools.clear();
}

/** A pooled connection the receiver closed while it idled fails at once; the request is sent again on another. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * POSTs `body` to `url` once. Never follows redirects (a 3xx is a failure). Unless private destinations
 * are allowed, the host is resolved and checked now and the socket connects to that checked address, so a
 * DNS answer that changes between check and connect cannot reach an internal address. Connections are kept
 * alive per origin and checked address.
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
    ok: false,
    statusCode,
    latencyMs: elapsed(),
    error,
    responseBody: null,
    retryAfter: undefined,
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return failure('invalid url');
  }
  let checked: ResolvedAddress | undefined;
  if (!options.allowPrivate) {
    try {
      checked = await checkDestination(target);
    } catch (error) {
      return failure(`destination refused: ${(error as Error).message}`);
    }
  }
  const client = target.protocol === 'https:' ? https : http;
  const agent = poolFor(target, checked);
  const lookup = checked ? pinnedLookup(checked) : undefined;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    let request: http.ClientRequest;
    const finish = (outcome: SendOutcome, keepConnection = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keepConnection) request.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish(failure(`timeout after ${timeoutMs} ms`)), timeoutMs);
    const send = () => {
      request = client.request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'billing-webhooks/1' },
        agent,
        lookup,
      });
      const sent = request;
      let answered = false;
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (settled || sent !== request) return;
        if (!answered && sent.reusedSocket && STALE_CONNECTION.has(error.code ?? '')) return send();
        finish(failure(error.code ? `${error.code}: ${error.message}` : error.message));
      });
      sent.on('response', (response) => {
        answered = true;
        const statusCode = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (complete: boolean) => {
          const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
          const ok = statusCode >= 200 && statusCode < 300;
          let error: string | null = null;
          if (statusCode >= 300 && statusCode < 400)
            error =
              `redirect (${statusCode}${response.headers.location ? ` to ${response.headers.location}` : ''}) ` +
              `not followed`;
          else if (!ok) error = `HTTP ${statusCode}`;
          const retryAfter = response.headers['retry-after'];
          // A response read to its end leaves the connection in the pool; one cut short closes it.
          finish(
            {
              ok,
              statusCode,
              latencyMs: elapsed(),
              error,
              responseBody: text,
              retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            },
            complete,
          );
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size > RESPONSE_BODY_LIMIT) done(false);
        });
        response.on('end', () => done(true));
        response.on('error', (error) => finish(failure(`response: ${error.message}`, statusCode)));
      });
      sent.end(body);
    };
    send();
  });
}
