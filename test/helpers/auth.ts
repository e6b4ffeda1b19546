import type { Knex } from 'knex';
import { createLocalUser } from '../../src/auth/service.ts';
import { request, sessionCookie } from './http.ts';

let counter = 0;

/** Creates a user with `role` and logs in; returns the Cookie header value. */
export async function loginAs(
  baseUrl: string,
  db: Knex,
  role = 'admin',
): Promise<{ cookie: string; email: string; password: string }> {
  counter += 1;
  const email = `${role}-${counter}-${Date.now()}@example.test`;
  const password = `pw-${counter}-correct horse battery`;
  await createLocalUser(db, { email, password, role });
  const response = await request(baseUrl, '/api/auth/login', { body: { email, password } });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
  return { cookie: sessionCookie(response), email, password };
}

export const loginAsAdmin = (baseUrl: string, db: Knex) => loginAs(baseUrl, db, 'admin');
