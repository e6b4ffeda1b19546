import { randomUUID } from 'node:crypto';
import { request } from '../helpers/http.ts';

/** Creates a customer over the admin API; the email is unique unless given. */
export async function createCustomer(baseUrl: string, cookie: string, body: Record<string, unknown> = {}) {
  const res = await request(baseUrl, '/api/customers', {
    cookie,
    body: { name: 'Test Customer', email: `c-${randomUUID()}@example.test`, ...body },
  });
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body;
}

/** Creates a product over the admin API. */
export async function createProduct(baseUrl: string, cookie: string, body: Record<string, unknown> = {}) {
  const res = await request(baseUrl, '/api/products', {
    cookie,
    body: { name: 'Product', productType: 'saas', price: '10', ...body },
  });
  if (res.status !== 201) throw new Error(`create product: ${res.status} ${res.text}`);
  return res.body;
}
