/**
 * Stand-ins for the payment providers' APIs on loopback, speaking their wire formats (D-60):
 * provider_a form-encoded `POST /v1/refunds`, `/v1/checkout/sessions` and `/v1/payment_intents` with a
 * Bearer secret key and an Idempotency-Key header, errors as `{error: {type, message}}`; provider_b JSON
 * `POST /v2/invoices` with Basic auth. The same Idempotency-Key answers the first response again, as the
 * real providers do, so `charges` counts what a provider would really have charged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The form (provider_a) or JSON object (provider_b) sent. */
  form: Record<string, string>;
}

export interface Behaviour {
  status?: number;
  body?: unknown;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Answers only once this settles. */
  hold?: Promise<void>;
  /** Drops the connection instead of answering. */
  reset?: boolean;
  /**
   * The provider does what was asked (a refund is made, kept under its Idempotency-Key and counted in `refunds`)
   * but its answer is lost: it answers `status` (default 500) after `delayMs` instead. A retry under the same key
   * is answered the success.
   */
  actsThenFails?: boolean;
}

export interface FakeProviderA {
  url: string;
  secretKey: string;
  /** provider_b's secret key (Basic auth user). */
  providerBKey: string;
  requests: ReceivedRequest[];
  /** Payment intents that succeeded (replays under the same Idempotency-Key are not counted again). */
  charges: {
    id: string;
    amount: string;
    currency: string;
    paymentMethod: string;
    idempotencyKey: string | undefined;
  }[];
  /** Refunds made, as `charges` (replays under the same Idempotency-Key are not counted again). */
  refunds: { id: string; paymentIntent: string; amount: string; idempotencyKey: string | undefined }[];
  /**
   * How to answer requests about `subject`: a refund's payment intent, a charge's payment method, a
   * checkout's metadata[invoiceId] or a provider_b external_id. Default: success.
   */
  behave(subject: string, behaviour: Behaviour): void;
  /** Outcomes of the next charges of a payment method, in order ('decline' or 'succeed'); then the default. */
  script(paymentMethod: string, outcomes: ('decline' | 'succeed')[]): void;
  /** Resolves once a request about this subject has arrived. */
  received(subject: string): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/** Payment methods whose charges provider_a declines, as its test cards do. */
export const DECLINING_METHOD = 'pm_card_decline';

const subjectOf = (path: string, form: Record<string, string>): string =>
  path === '/v1/refunds'
    ? (form.payment_intent ?? '')
    : path === '/v1/payment_intents'
      ? (form.payment_method ?? '')
      : path === '/v1/checkout/sessions'
        ? (form['metadata[invoiceId]'] ?? '')
        : (form.external_id ?? '');

export async function startFakeProviders(secretKey = 'sk_test', providerBKey = 'xnd_test'): Promise<FakeProviderA> {
  const requests: ReceivedRequest[] = [];
  const charges: FakeProviderA['charges'] = [];
  const refunds: FakeProviderA['refunds'] = [];
  const behaviours = new Map<string, Behaviour>();
  const scripts = new Map<string, ('decline' | 'succeed')[]>();
  const byKey = new Map<string, { status: number; body: unknown }>();
  const waiters: { subject: string; resolve: (r: ReceivedRequest) => void }[] = [];
  let counter = 0;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '';
    const isB = path === '/v2/invoices';
    let form: Record<string, string> = {};
    try {
      form = isB ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text));
    } catch {
      form = {};
    }
    const received: ReceivedRequest = { method: req.method ?? '', path, headers: req.headers, form };
    requests.push(received);
    const subject = subjectOf(path, form);
    for (const w of waiters.filter((w) => w.subject === subject)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(received);
    }
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const refuse = (status: number, message: string) =>
      answer(status, { error: { type: 'invalid_request_error', message } });
    const known = ['/v1/refunds', '/v1/checkout/sessions', '/v1/payment_intents', '/v2/invoices'];
    if (req.method !== 'POST' || !known.includes(path))
      return refuse(404, `Unrecognized request URL (${req.method}: ${path})`);
    if (isB) {
      if (req.headers.authorization !== `Basic ${Buffer.from(`${providerBKey}:`).toString('base64')}`)
        return answer(401, { error_code: 'INVALID_API_KEY', message: 'API key is invalid' });
      if (!form.external_id || !/^\d+(\.\d+)?$/.test(String(form.amount ?? '')))
        return answer(400, {
          error_code: 'API_VALIDATION_ERROR',
          message: 'external_id and a decimal amount are required',
        });
    } else {
      if (req.headers.authorization !== `Bearer ${secretKey}`) return refuse(401, 'Invalid API Key provided');
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
        return refuse(400, 'Form-encode the body');
      const amount = path === '/v1/checkout/sessions' ? form['line_items[0][price_data][unit_amount]'] : form.amount;
      if (!subject || !/^\d+$/.test(amount ?? '')) return refuse(400, 'Missing subject or integer amount');
    }
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key && byKey.has(key)) {
      const stored = byKey.get(key)!;
      return answer(stored.status, stored.body);
    }
    const behaviour = behaviours.get(subject) ?? {};
    if (behaviour.actsThenFails && path === '/v1/refunds') {
      const id = `re_fake_${++counter}`;
      refunds.push({ id, paymentIntent: subject, amount: form.amount!, idempotencyKey: key });
      if (key)
        byKey.set(key, {
          status: 200,
          body: { id, object: 'refund', amount: Number(form.amount), payment_intent: subject, status: 'succeeded' },
        });
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      if (res.destroyed) return;
      return answer(
        behaviour.status ?? 500,
        behaviour.body ?? {
          error: { type: 'api_error', message: 'An error occurred with our connection to the bank.' },
        },
      );
    }
    if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
    if (behaviour.hold) await behaviour.hold;
    if (behaviour.reset) return void req.socket.destroy();
    if (res.destroyed) return;
    counter += 1;
    let status = behaviour.status ?? 200;
    let body = behaviour.body;
    if (body === undefined && status < 300) {
      if (path === '/v1/refunds') {
        body = {
          id: `re_fake_${counter}`,
          object: 'refund',
          amount: Number(form.amount),
          payment_intent: form.payment_intent,
          status: 'succeeded',
        };
        refunds.push({ id: `re_fake_${counter}`, paymentIntent: subject, amount: form.amount!, idempotencyKey: key });
      } else if (path === '/v1/checkout/sessions')
        body = {
          id: `cs_fake_${counter}`,
          object: 'checkout.session',
          url: `https://checkout.provider-a.example/pay/cs_fake_${counter}`,
          amount_total: Number(form['line_items[0][price_data][unit_amount]']),
        };
      else if (path === '/v2/invoices')
        body = {
          id: `inv_b_fake_${counter}`,
          external_id: form.external_id,
          status: 'PENDING',
          invoice_url: `https://checkout.provider-b.example/web/inv_b_fake_${counter}`,
        };
      else {
        const scripted = scripts.get(subject)?.shift();
        const declines = scripted ? scripted === 'decline' : subject.startsWith(DECLINING_METHOD);
        const id = `pi_fake_${counter}`;
        if (declines) {
          status = 402;
          body = {
            error: {
              type: 'card_error',
              code: 'card_declined',
              message: 'Your card was declined.',
              payment_intent: { id, status: 'requires_payment_method' },
            },
          };
        } else {
          body = {
            id,
            object: 'payment_intent',
            amount: Number(form.amount),
            currency: form.currency,
            status: 'succeeded',
          };
          charges.push({
            id,
            amount: form.amount!,
            currency: form.currency!,
            paymentMethod: subject,
            idempotencyKey: key,
          });
        }
      }
    }
    // Like the real providers, a 5xx is not kept under the key: the same request may be sent again.
    if (key && status < 500) byKey.set(key, { status, body });
    answer(status, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    providerBKey,
    requests,
    charges,
    refunds,
    behave: (subject, behaviour) => void behaviours.set(subject, behaviour),
    script: (method, outcomes) => void scripts.set(method, [...outcomes]),
    received: (subject) => {
      const already = requests.find((r) => subjectOf(r.path, r.form) === subject);
      return already ? Promise.resolve(already) : new Promise((resolve) => waiters.push({ subject, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The refunds tests' name for the same fake. */
export const startFakeProviderA = startFakeProviders;
