/**
 * A stand-in for provider_a's refunds API on loopback, speaking its wire format (D-60): form-encoded
 * `POST /v1/refunds` with a Bearer secret key and an Idempotency-Key header, JSON answers, errors as
 * `{error: {type, message}}`. The same Idempotency-Key answers the first response again, as the real
 * provider does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: Record<string, string>;
}

export interface Behaviour {
  status?: number;
  body?: unknown;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Answers only once this settles. */
  hold?: Promise<void>;
}

export interface FakeProviderA {
  url: string;
  secretKey: string;
  requests: ReceivedRequest[];
  /** How to answer refunds of one payment intent (the default: a succeeded refund). */
  behave(paymentIntent: string, behaviour: Behaviour): void;
  /** Resolves once a request for this payment intent has arrived. */
  received(paymentIntent: string): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

export async function startFakeProviderA(secretKey = 'sk_test'): Promise<FakeProviderA> {
  const requests: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const byKey = new Map<string, { status: number; body: unknown }>();
  const waiters: { intent: string; resolve: (r: ReceivedRequest) => void }[] = [];
  let counter = 0;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, form };
    requests.push(received);
    for (const w of waiters.filter((w) => w.intent === form.payment_intent)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(received);
    }
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/v1/refunds') return answer(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${req.url})` } });
    if (req.headers.authorization !== `Bearer ${secretKey}`) return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return answer(400, { error: { type: 'invalid_request_error', message: 'Form-encode the body' } });
    if (!form.payment_intent || !/^\d+$/.test(form.amount ?? '')) return answer(400, { error: { type: 'invalid_request_error', message: 'Missing payment_intent or integer amount' } });
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key && byKey.has(key)) {
      const stored = byKey.get(key)!;
      return answer(stored.status, stored.body);
    }
    const behaviour = behaviours.get(form.payment_intent) ?? {};
    if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
    if (behaviour.hold) await behaviour.hold;
    if (res.destroyed) return;
    counter += 1;
    const status = behaviour.status ?? 200;
    const body = behaviour.body ?? { id: `re_fake_${counter}`, object: 'refund', amount: Number(form.amount), payment_intent: form.payment_intent, status: 'succeeded' };
    if (key) byKey.set(key, { status, body });
    answer(status, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    requests,
    behave: (intent, behaviour) => void behaviours.set(intent, behaviour),
    received: (intent) => {
      const already = requests.find((r) => r.form.payment_intent === intent);
      return already ? Promise.resolve(already) : new Promise((resolve) => waiters.push({ intent, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
