import type { Knex } from 'knex';
import { createPlan } from '../../src/plans/service.ts';
import type { BillingCycle } from '../../src/subscriptions/periods.ts';
import { insertCustomer } from '../helpers/factories.ts';

let n = 0;

/** A product and a plan of it, created through the services. */
export async function makePlan(db: Knex, basePrice: string, billingCycle: BillingCycle = 'monthly', currency = 'USD') {
  n += 1;
  const [product] = await db('products').insert({ name: `Product ${n}`, product_type: 'saas', price: basePrice }).returning('id');
  return createPlan(db, { productId: product.id, name: `Plan ${n} ${basePrice}`, pricingModel: 'flat', billingCycle, basePrice, currency });
}

export const newCustomer = (db: Knex) => insertCustomer(db);

export async function invoicesOf(db: Knex, subscriptionId: string) {
  return db('invoices').where({ subscription_id: subscriptionId }).orderBy([{ column: 'created_at' }, { column: 'invoice_number' }]);
}

export async function balanceOf(db: Knex, customerId: string, currency = 'USD'): Promise<string> {
  const row = await db('credit_ledger').where({ customer_id: customerId, currency }).sum('amount as s').first();
  return String(row?.s ?? '0');
}
