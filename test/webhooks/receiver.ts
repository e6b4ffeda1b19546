import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Behaviour = (req: Received, res: http.ServerResponse) => void;

/** A webhook receiver on loopback: records every request and answers per path (default 200). */
export async function startReceiver(behaviours: Record<string, Behaviour> = {}) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      const behaviour = behaviours[entry.path];
      if (behaviour) behaviour(entry, res);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** TCP connections accepted so far. */
    connections: () => connections,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The receiver's own check of X-Signature: lowercase hex HMAC-SHA256 of the exact body. */
export function xSignatureValid(secret: string, r: Received): boolean {
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(r.body).digest('hex');
  const given = String(r.headers['x-signature'] ?? '');
  return (
    given.length === expected.length &&
    /^[0-9a-f]+$/.test(given) &&
    timingSafeEqual(Buffer.from(given), Buffer.from(expected))
  );
}

/** The Standard Webhooks check by the reference library; the key is the secret's UTF-8 bytes (D-72). */
export function standardWebhookPayload(secret: string, r: Received): unknown {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  return new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(r.body, headers);
}
