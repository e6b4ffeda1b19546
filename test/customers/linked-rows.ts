import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/** A plan of the product and an active subscription of the customer to it, inserted directly. */
export async function subscribe(db: Knex, customerId: string, productId: string): Promise<string> {
  const [plan] = await db('plans')
    .insert({
      product_id: productId,
      name: 'Plan',
      pricing_model: 'flat',
      billing_cycle: 'monthly',
      base_price: '10',
      currency: 'USD',
    })
    .returning('id');
  const now = new Date();
  const [subscription] = await db('subscriptions')
    .insert({
      customer_id: customerId,
      plan_id: plan.id,
      status: 'active',
      billing_cycle: 'monthly',
      billing_anchor: now,
      period_number: 0,
      current_period_start: now,
      current_period_end: new Date(now.getTime() + 30 * 86_400_000),
    })
    .returning('id');
  return subscription.id as string;
}

/** A license row of the customer for the product. */
export async function license(db: Knex, customerId: string, productId: string): Promise<void> {
  await db('licenses').insert({
    customer_id: customerId,
    product_id: productId,
    license_key: `T-${randomUUID().slice(0, 18)}`,
  });
}

/** A draft invoice row of the customer. */
export async function invoice(db: Knex, customerId: string): Promise<void> {
  await db('invoices').insert({
    customer_id: customerId,
    invoice_number: `T-${randomUUID()}`,
    status: 'draft',
    currency: 'USD',
    subtotal: '0',
    tax_amount: '0',
    total: '0',
  });
}
