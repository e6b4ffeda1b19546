import { createHmac } from 'node:crypto';
import type { Benchmark } from './harness.ts';

const SECRET = 'whsec_bench_provider_a';

/**
 * A provider posting events (D-62, issue 7): every request is a new provider_a event, signed over its
 * exact bytes, verified, stored and queued in one transaction, and acknowledged. Aim: p99 < 50 ms at 32
 * connections; the ratio is to the one-write-transaction ceiling.
 */
export const providerWebhookAck: Benchmark = {
  name: 'POST /api/billing/webhooks/provider_a',
  ceiling: 'write',
  aimP99Ms: 50,
  serviceEnv: { PROVIDER_A_WEBHOOK_SECRET: SECRET },
  load: () => {
    let n = 0;
    const run = Date.now().toString(36);
    return {
      method: 'POST',
      next: () => {
        n += 1;
        // An event type the worker stores and ignores: the acknowledgement is what is measured.
        const body = JSON.stringify({
          id: `evt_bench_${run}_${n}`,
          type: 'charge.updated',
          created: Math.floor(Date.now() / 1000),
          data: { object: { id: `ch_${n}` } },
        });
        const t = Math.floor(Date.now() / 1000);
        const signature = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
        return {
          path: '/api/billing/webhooks/provider_a',
          rawBody: body,
          headers: { 'provider_a-signature': `t=${t},v1=${signature}` },
        };
      },
      accept: (body) => body.includes('"received":true'),
    };
  },
};
