import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createMetric } from '../../src/metering/service.ts';
import type { ChargeInput } from '../../src/metering/charge-schema.ts';
import type { Aggregation } from '../../src/metering/schema.ts';
import { createPlan } from '../../src/plans/service.ts';
import { createSubscription } from '../../src/subscriptions/service.ts';
import type { TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';

let n = 0;
export const DAY = 86_400_000;

/** A metric through the service; `field` defaults to `value` for aggregations that read one. */
export function makeMetric(db: Knex, aggregation: Aggregation = 'count', field?: string) {
  n += 1;
  return createMetric(
    db,
    {
      code: `metric_${n}_${Math.floor(Math.random() * 1e6)}`,
      name: `Metric ${n}`,
      aggregation,
      ...(aggregation === 'count' ? {} : { field: field ?? 'value' }),
    },
    SYSTEM_ACTOR,
  );
}

/** A usage (or hybrid, with basePrice > 0) monthly USD plan with these charges. */
export async function makeUsagePlan(db: Knex, charges: ChargeInput[], basePrice = '0', taxRateIds?: string[]) {
  n += 1;
  const [product] = await db('products')
    .insert({ name: `API ${n}`, product_type: 'api', price: '0' })
    .returning('id');
  return createPlan(
    db,
    {
      productId: product.id,
      name: `Usage plan ${n}`,
      pricingModel: basePrice === '0' ? 'usage' : 'hybrid',
      billingCycle: 'monthly',
      basePrice,
      currency: 'USD',
      charges,
      ...(taxRateIds ? { taxRateIds } : {}),
    },
    SYSTEM_ACTOR,
  );
}

/** A customer subscribed to `planId` since `since` (default: 10 days ago). */
export async function subscribe(db: Knex, planId: string, since = new Date(Date.now() - 10 * DAY), trialDays?: number) {
  const customer = await insertCustomer(db);
  const sub = await createSubscription(
    db,
    { customerId: customer.id, planId, billingCycle: 'monthly', ...(trialDays ? { trialDays } : {}) },
    SYSTEM_ACTOR,
    { now: since },
  );
  return { customer, sub };
}

/** An API key of the customer (its secret). */
export async function apiKeyOf(app: TestApp, cookie: string, customerId: string): Promise<string> {
  const res = await request(app.baseUrl, '/api/api-keys', { cookie, body: { name: 'usage', customerId } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.key;
}

let tx = 0;
export const txId = (prefix = 'tx') => `${prefix}-${++tx}-${Math.floor(Math.random() * 1e9)}`;
