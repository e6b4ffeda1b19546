import { insertCustomer } from '../helpers/factories.ts';
import { request } from '../helpers/http.ts';
import type { Ctx } from '../payments/fixtures.ts';
import { makePlan } from '../subscriptions/fixtures.ts';

/** An active monthly subscription through the API (its first invoice issued); answers the subscription. */
export async function newSubscription(c: Ctx): Promise<{ id: string }> {
  const customer = await insertCustomer(c.db);
  const plan = await makePlan(c.db, '30.00');
  const res = await request(c.baseUrl, '/api/billing/subscriptions', {
    cookie: c.cookie,
    body: { customerId: customer.id, planId: plan.id, billingCycle: 'monthly' },
  });
  if (res.status !== 201) throw new Error(`setup subscription: ${res.status} ${res.text}`);
  return res.body;
}
