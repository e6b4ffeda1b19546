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

const csrfBySession = new Map<string, Promise<string>>();

/**
 * The console's CSRF token of the session behind `cookie`, as its pages carry it in `_csrf` (bound to the session,
 * issue 33): read once per session from the overview page, like a browser that opened the console.
 */
export function consoleCsrf(baseUrl: string, cookie: string): Promise<string> {
  let token = csrfBySession.get(cookie);
  if (!token) {
    token = request(baseUrl, '/admin', { cookie }).then((page) => {
      const found = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
      if (!found) throw new Error(`no _csrf field on /admin (status ${page.status})`);
      return found;
    });
    csrfBySession.set(cookie, token);
  }
  return token;
}
