import type { Knex } from 'knex';
import { jobHandlers } from '../../src/process/jobs.ts';
import { registerWorkers } from '../../src/queue/workers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { request, type Json } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

let n = 0;

/** A test file's app with an admin session and the lifecycle worker, which runs the clocks' advances. */
export async function startClockApp(): Promise<{ app: TestApp; cookie: string }> {
  const app = await startTestApp();
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  await registerWorkers(app.boss, app.deps, ['lifecycle'], jobHandlers);
  return { app, cookie };
}

/** An admin API call with the session `cookie`. */
export const api = (app: TestApp, cookie: string, path: string, options: { method?: string; body?: unknown } = {}) =>
  request(app.baseUrl, path, { ...options, cookie });

export async function createClock(app: TestApp, cookie: string, frozenTime: string): Promise<Json> {
  const res = await api(app, cookie, '/api/billing/test-clocks', { body: { name: `Clock ${++n}`, frozenTime } });
  if (res.status !== 201) throw new Error(`clock: ${res.status} ${res.text}`);
  return res.body;
}

/** A customer on the clock (or on none), with a default payment method when `method` is given. */
export async function clockCustomer(app: TestApp, cookie: string, testClockId: string | null, method?: string) {
  const res = await api(app, cookie, '/api/customers', {
    body: {
      name: `Clock customer ${++n}`,
      email: `tc-${n}-${Date.now()}@example.test`,
      ...(testClockId ? { testClockId } : {}),
    },
  });
  if (res.status !== 201) throw new Error(`customer: ${res.status} ${res.text}`);
  if (method) {
    const pm = await api(app, cookie, '/api/billing/payment-methods', {
      body: { customerId: res.body.id, type: 'provider_a', providerMethodId: method, isDefault: true },
    });
    if (pm.status !== 201) throw new Error(`payment method: ${pm.status} ${pm.text}`);
  }
  return res.body as Json;
}

export async function subscribe(
  app: TestApp,
  cookie: string,
  customerId: string,
  plan: { id: string; billing_cycle?: string },
  extra: Record<string, unknown> = {},
) {
  const res = await api(app, cookie, '/api/billing/subscriptions', {
    body: { customerId, planId: plan.id, billingCycle: plan.billing_cycle ?? 'monthly', ...extra },
  });
  if (res.status !== 201) throw new Error(`subscription: ${res.status} ${res.text}`);
  return res.body as Json;
}

/** Asks for an advance (202) and waits until the clock is ready (or failed) again; answers the clock. */
export async function advance(app: TestApp, cookie: string, clockId: string, frozenTime: string): Promise<Json> {
  const res = await api(app, cookie, `/api/billing/test-clocks/${clockId}/advance`, { body: { frozenTime } });
  if (res.status !== 202) throw new Error(`advance: ${res.status} ${res.text}`);
  return waitForClock(app, cookie, clockId);
}

export async function waitForClock(app: TestApp, cookie: string, clockId: string, ms = 60_000): Promise<Json> {
  return waitFor(
    async () => (await api(app, cookie, `/api/billing/test-clocks/${clockId}`)).body,
    (clock) => clock.status !== 'advancing',
    ms,
  );
}

/** The events naming the customer, oldest first. */
export function eventsOfCustomer(db: Knex, customerId: string): Promise<{ type: string; data: Json }[]> {
  return db('events')
    .whereRaw(`data->>'customerId' = ?`, [customerId])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('type', 'data');
}
