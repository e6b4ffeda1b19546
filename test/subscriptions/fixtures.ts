import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/actor.ts';
import { createPlan } from '../../src/plans/service.ts';
import type { BillingCycle } from '../../src/plans/cycles.ts';
import type { TestApp } from '../helpers/app.ts';
import { insertCustomer } from '../helpers/factories.ts';
import { request, type JsonResponse, type RequestOptions } from '../helpers/http.ts';

let n = 0;

/** A product and a plan of it, created through the services. */
export async function makePlan(db: Knex, basePrice: string, billingCycle: BillingCycle = 'monthly', currency = 'USD') {
  n += 1;
  const [product] = await db('products')
    .insert({ name: `Product ${n}`, product_type: 'saas', price: basePrice })
    .returning('id');
  return createPlan(
    db,
    { productId: product.id, name: `Plan ${n} ${basePrice}`, pricingModel: 'flat', billingCycle, basePrice, currency },
    SYSTEM_ACTOR,
  );
}

export const newCustomer = (db: Knex) => insertCustomer(db);

export async function invoicesOf(db: Knex, subscriptionId: string) {
  return db('invoices')
    .where({ subscription_id: subscriptionId })
    .orderBy([{ column: 'created_at' }, { column: 'invoice_number' }]);
}

export async function balanceOf(db: Knex, customerId: string, currency = 'USD'): Promise<string> {
  const row = await db('credit_ledger').where({ customer_id: customerId, currency }).sum('amount as s').first();
  return String(row?.s ?? '0');
}

/** Rows of the customer in the tables a subscription creation writes to: a refused one must leave all at 0. */
export async function footprintOf(db: Knex, customerId: string) {
  const count = async (q: Knex.QueryBuilder) => Number((await q.count<{ n: string }[]>('* as n'))[0]!.n);
  return {
    subscriptions: await count(db('subscriptions').where({ customer_id: customerId })),
    invoices: await count(db('invoices').where({ customer_id: customerId })),
    events: await count(db('events').whereRaw("data->>'customerId' = ?", [customerId])),
  };
}

/** Events about one subscription (subscription.* carry its id, invoice.* its subscriptionId), oldest first. */
export async function eventsOf(db: Knex, subscriptionId: string, type?: string) {
  const query = db('events').where((q) =>
    q.whereRaw("data->>'id' = ?", [subscriptionId]).orWhereRaw("data->>'subscriptionId' = ?", [subscriptionId]),
  );
  if (type) query.where({ type });
  return query.orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

/** An invoice's line items in the order written. */
export async function linesOf(db: Knex, invoiceId: string) {
  return db('invoice_line_items').where({ invoice_id: invoiceId }).orderBy('position');
}

export type Api = (path: string, options?: RequestOptions) => Promise<JsonResponse>;

/** Requests to the test app with an admin session. */
export const adminApi =
  (app: TestApp, cookie: string): Api =>
  (path, options = {}) =>
    request(app.baseUrl, path, { cookie, ...options });

/** A product over the admin API (USD unless given). */
export async function productHttp(api: Api, body: Record<string, unknown> = {}) {
  const res = await api('/api/products', {
    body: { name: 'Subscribed product', productType: 'saas', price: '10', ...body },
  });
  if (res.status !== 201) throw new Error(`create product: ${res.status} ${res.text}`);
  return res.body as { id: string; name: string; productType: string };
}

/** A plan over the admin API, on a new product unless productId is given. */
export async function planHttp(api: Api, body: Record<string, unknown> = {}) {
  const productId = (body.productId as string | undefined) ?? (await productHttp(api)).id;
  const res = await api('/api/billing/plans', {
    body: {
      productId,
      name: 'Pro',
      pricingModel: 'flat',
      billingCycle: 'monthly',
      basePrice: '29.90',
      currency: 'USD',
      ...body,
    },
  });
  if (res.status !== 201) throw new Error(`create plan: ${res.status} ${res.text}`);
  return res.body as { id: string; productId: string; basePrice: string; currency: string; billingCycle: string };
}
