import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { allRoutes } from '../../src/routes.ts';
import { request } from '../helpers/http.ts';

/** A customer row straight in the table (the customers routes are built elsewhere). */
export async function insertCustomer(db: Knex, name = 'Acme Corp'): Promise<string> {
  const [row] = await db('customers').insert({ name, email: `${randomUUID()}@customer.test` }).returning('id');
  return (row as { id: string }).id;
}

/** Creates a key over the admin API; returns the created record (with the key). */
export async function createKey(baseUrl: string, cookie: string, customerId: string, extra: Record<string, unknown> = {}) {
  const res = await request(baseUrl, '/api/api-keys', { cookie, body: { name: 'integration', customerId, ...extra } });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body as { id: string; key: string; prefix: string; customerId: string };
}

/**
 * A v1 route to probe API-key auth with: GET /api/v1/customer (D-15) when it exists, else any
 * parameterless GET that takes an API key; undefined while no v1 route is written yet.
 */
export function v1ProbePath(): string | undefined {
  const keyRoutes = allRoutes.filter((r) => r.auth === 'apiKey' && r.method === 'get' && !r.path.includes(':'));
  return (keyRoutes.find((r) => r.path === '/api/v1/customer') ?? keyRoutes[0])?.path;
}
