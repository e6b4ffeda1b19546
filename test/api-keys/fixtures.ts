import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { request } from '../helpers/http.ts';

/** A customer row straight in the table (the customers routes are another engineer's). */
export async function insertCustomer(db: Knex, name = 'Acme Corp'): Promise<string> {
  const [row] = await db('customers')
    .insert({ name, email: `${randomUUID()}@customer.test` })
    .returning('id');
  return (row as { id: string }).id;
}

/** Creates a key over the admin API; returns the created record (with the key). */
export async function createKey(
  baseUrl: string,
  cookie: string,
  customerId: string,
  extra: Record<string, unknown> = {},
) {
  const res = await request(baseUrl, '/api/api-keys', { cookie, body: { name: 'integration', customerId, ...extra } });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body as { id: string; key: string; prefix: string; customerId: string; lastUsedAt: string | null };
}

/** The v1 route API-key auth is probed with (D-15): it answers the key's own customer. */
export const V1_PROBE_PATH = '/api/v1/customer';
