/**
 * `npx tsx bench/round-trips.ts`: the statements each hot request sends to PostgreSQL, counted by wrapping
 * pg's Client.query in this process (the app runs in-process on a throw-away bench database). Prints each
 * request's statements in order, so a change to the request path shows its round trips before and after.
 */
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { cleanUp } from './harness.ts';
import { startInProcessApp } from './in-process-app.ts';

const SECRET = 'whsec_round_trips';
const seen: string[] = [];
let counting = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const first = args[0] as string | { text?: string; name?: string };
    const text = typeof first === 'string' ? first : `${first.name ? `[${first.name}] ` : ''}${first.text ?? ''}`;
    seen.push(text.replace(/\s+/g, ' ').trim().slice(0, 140));
  }
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

try {
  const { rows, base, cookie } = await startInProcessApp({ PROVIDER_A_WEBHOOK_SECRET: SECRET });

  const requests: Array<[string, () => Promise<Response>]> = [
    ['GET /api/products/:id', () => fetch(`${base}/api/products/${rows.productIds[0]}`, { headers: { cookie } })],
    [
      'POST /api/customers',
      () =>
        fetch(`${base}/api/customers`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Round Trip', email: `rt-${Date.now()}@bench.test` }),
        }),
    ],
    [
      'POST /api/billing/invoices',
      () =>
        fetch(`${base}/api/billing/invoices`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({
            customerId: rows.customerIds[0],
            taxRate: '8.25',
            lineItems: [
              { description: 'Round trip', quantity: 1, unitPrice: '49.00' },
              { description: 'Seats', quantity: 3, unitPrice: '9.99' },
            ],
          }),
        }),
    ],
    [
      'POST /api/billing/invoices (issued)',
      () =>
        fetch(`${base}/api/billing/invoices`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({
            customerId: rows.customerIds[1],
            status: 'issued',
            lineItems: [{ description: 'Round trip', quantity: 1, unitPrice: '49.00' }],
          }),
        }),
    ],
    [
      'POST /api/billing/subscriptions',
      () =>
        fetch(`${base}/api/billing/subscriptions`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ customerId: rows.customerIds[2], planId: rows.planIds[0], billingCycle: 'monthly' }),
        }),
    ],
    [
      'POST /api/billing/webhooks/provider_a',
      () => {
        const body = JSON.stringify({
          id: `evt_rt_${Date.now()}`,
          type: 'charge.updated',
          created: Math.floor(Date.now() / 1000),
          data: { object: { id: 'ch_1' } },
        });
        const t = Math.floor(Date.now() / 1000);
        const signature = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
        return fetch(`${base}/api/billing/webhooks/provider_a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'provider_a-signature': `t=${t},v1=${signature}` },
          body,
        });
      },
    ],
  ];
  for (const [name, send] of requests) {
    await (await send()).arrayBuffer(); // warm: prepared statements, queue cache
    seen.length = 0;
    counting = true;
    const response = await send();
    await response.arrayBuffer();
    counting = false;
    console.log(`\n${name} -> ${response.status}: ${seen.length} statements`);
    for (const text of seen) console.log(`  ${text}`);
  }
} finally {
  await cleanUp();
}
process.exit(0);
