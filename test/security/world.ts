/**
 * A small billing world for the security tests: two customers, each with a product, plan, subscription,
 * invoice, payment, license (with a device), payment method and API key, plus one webhook endpoint
 * with deliveries. Everything is made over the admin API, as a user would.
 */
import { randomUUID } from 'node:crypto';
import type { AnyRoute } from '../../src/http/route.ts';
import type { TestApp } from '../helpers/app.ts';
import { request, type Json, type RequestOptions } from '../helpers/http.ts';

export interface CustomerWorld {
  customerId: string;
  productId: string;
  planId: string;
  subscriptionId: string;
  invoiceId: string;
  /** Issued and named only by the checkout routes: the other routes' accepted requests may pay or void invoiceId. */
  payableInvoiceId: string;
  paymentId: string;
  licenseId: string;
  licenseKey: string;
  deviceId: string;
  paymentMethodId: string;
  apiKeyId: string;
  apiKey: string;
  /** One of the customer's emails (the invoices' invoice.issued). */
  emailId: string;
}

export interface World {
  a: CustomerWorld;
  b: CustomerWorld;
  endpointId: string;
  deliveryId: string;
  taxRateId: string;
  /** A billable metric (issue 35) no example deletes. */
  metricId: string;
  /** A test clock (issue 39) no example deletes. */
  testClockId: string;
}

async function created(
  app: TestApp,
  cookie: string,
  path: string,
  body: unknown,
  options: RequestOptions = {},
): Promise<Json> {
  const res = await request(app.baseUrl, path, { cookie, body, ...options });
  if (res.status !== 201 && res.status !== 200) throw new Error(`world setup ${path}: ${res.status} ${res.text}`);
  return res.body;
}

async function customerWorld(app: TestApp, cookie: string, name: string): Promise<CustomerWorld> {
  const customer = await created(app, cookie, '/api/customers', {
    name,
    email: `${name.toLowerCase()}-${randomUUID()}@example.test`,
  });
  const product = await created(app, cookie, '/api/products', {
    name: `${name} product`,
    productType: 'licensed',
    price: '10.00',
  });
  const plan = await created(app, cookie, '/api/billing/plans', {
    productId: product.id,
    name: `${name} plan`,
    pricingModel: 'flat',
    billingCycle: 'monthly',
    basePrice: '10.00',
    currency: 'USD',
  });
  const subscription = await created(app, cookie, '/api/billing/subscriptions', {
    customerId: customer.id,
    planId: plan.id,
    billingCycle: 'monthly',
  });
  const invoice = await created(app, cookie, '/api/billing/invoices', {
    customerId: customer.id,
    lineItems: [{ description: 'Setup', quantity: 1, unitPrice: '100.00' }],
    status: 'issued',
  });
  // Large, since store credit granted by the fuzzing (amounts up to 99.00) is applied to open invoices.
  const payableInvoice = await created(app, cookie, '/api/billing/invoices', {
    customerId: customer.id,
    lineItems: [{ description: 'Support', quantity: 1, unitPrice: '1000000.00' }],
    status: 'issued',
  });
  const payment = await created(app, cookie, '/api/billing/payments', {
    invoiceId: invoice.id,
    amount: '1.00',
    paymentMethod: 'manual',
  });
  const license = await created(app, cookie, '/api/licenses', {
    customerId: customer.id,
    productId: product.id,
    maxActivations: 5,
  });
  const deviceId = `device-${name}`;
  const validated = await request(app.baseUrl, '/api/licenses/validate', {
    body: { licenseKey: license.licenseKey, deviceId, deviceName: `${name}'s laptop` },
  });
  if (validated.body?.valid !== true) throw new Error(`world setup validate: ${validated.status} ${validated.text}`);
  const method = await created(app, cookie, '/api/billing/payment-methods', {
    customerId: customer.id,
    type: 'provider_a',
    providerMethodId: `pm_${name}`,
    isDefault: true,
  });
  const key = await created(app, cookie, '/api/api-keys', { name: `${name} key`, customerId: customer.id });
  const email = await app.db('emails').where({ customer_id: customer.id }).first('id');
  if (!email) throw new Error('world setup: the customer has no email');
  return {
    customerId: customer.id,
    productId: product.id,
    planId: plan.id,
    subscriptionId: subscription.id,
    invoiceId: invoice.id,
    payableInvoiceId: payableInvoice.id,
    paymentId: payment.id,
    licenseId: license.id,
    licenseKey: license.licenseKey,
    deviceId,
    paymentMethodId: method.id,
    apiKeyId: key.id,
    apiKey: key.key,
    emailId: email.id,
  };
}

export async function buildWorld(app: TestApp, cookie: string): Promise<World> {
  // The endpoint comes first so the world's events fan out into deliveries (nothing delivers them: no worker runs).
  const endpoint = await created(app, cookie, '/api/billing/webhooks/endpoints', {
    url: 'http://127.0.0.1:9/never-called',
    events: ['*'],
  });
  const taxRate = await created(app, cookie, '/api/billing/tax-rates', { name: 'VAT DE', percentage: '19' });
  const a = await customerWorld(app, cookie, 'Alice');
  const b = await customerWorld(app, cookie, 'Bob');
  const delivery = await app.db('webhook_deliveries').where({ endpoint_id: endpoint.id }).first('id');
  if (!delivery) throw new Error('world setup: no webhook delivery was created');
  const metric = await created(app, cookie, '/api/billing/metrics', {
    code: 'world_calls',
    name: 'World calls',
    aggregation: 'count',
  });
  const clock = await created(app, cookie, '/api/billing/test-clocks', {
    name: 'World clock',
    frozenTime: '2026-01-01',
  });
  return {
    a,
    b,
    endpointId: endpoint.id,
    deliveryId: delivery.id,
    taxRateId: taxRate.id,
    metricId: metric.id,
    testClockId: clock.id,
  };
}

/**
 * The existing record a path parameter names, by the collection segment in front of it
 * (`/api/billing/invoices/:id` → an invoice). Undefined when the world has no such record.
 */
export function existingParam(route: AnyRoute, name: string, world: World, owner: CustomerWorld): string | undefined {
  const segments = route.path.split('/');
  const collection = segments[segments.indexOf(`:${name}`) - 1];
  const byCollection: Record<string, string> = {
    products: owner.productId,
    customers: owner.customerId,
    // Licenses are addressed by key in admin paths, by id in paging cursors.
    licenses: name === 'key' ? owner.licenseKey : owner.licenseId,
    activations: owner.deviceId,
    invoices: owner.invoiceId,
    plans: owner.planId,
    subscriptions: owner.subscriptionId,
    payments: owner.paymentId,
    'payment-methods': owner.paymentMethodId,
    'api-keys': owner.apiKeyId,
    endpoints: world.endpointId,
    deliveries: world.deliveryId,
    'tax-rates': world.taxRateId,
    metrics: world.metricId,
    emails: owner.emailId,
    'test-clocks': world.testClockId,
  };
  return collection === undefined ? undefined : byCollection[collection];
}

/** The names of a route's path parameters, in order. */
export function pathParamNames(route: AnyRoute): string[] {
  return [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
}

/** The route's path with each parameter replaced (values are URL-encoded here). */
export function fillPath(route: AnyRoute, values: Record<string, string>): string {
  return route.path.replace(/:(\w+)/g, (_m, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for :${name} of ${route.path}`);
    return encodePathSegment(value);
  });
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) becomes the bytes a careless
 * client would send for it (CESU-8), so hostile path values still reach the server.
 */
export function encodePathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    let out = '';
    for (const ch of value) {
      const code = ch.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) {
        out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
          .map((b) => `%${b.toString(16).toUpperCase()}`)
          .join('');
      } else {
        out += encodeURIComponent(ch);
      }
    }
    return out;
  }
}

export const routeName = (route: AnyRoute) => `${route.method.toUpperCase()} ${route.path}`;
