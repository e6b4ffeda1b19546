/** Clients of the fault tests: an admin login on a database, and a POST that retries until it gets an answer. */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createLocalUser } from '../../src/auth/service.ts';
import { request, sessionCookie, type Json, type JsonResponse } from '../helpers/http.ts';
import { sleep } from './processes.ts';

/** An admin created in `db`, logged in through `baseUrl`: the Cookie header value. */
export async function adminCookie(baseUrl: string, db: Knex): Promise<string> {
  const email = `faults-${randomUUID()}@example.test`;
  const password = 'faults correct horse battery';
  await createLocalUser(db, { email, password, role: 'admin' });
  const response = await request(baseUrl, '/api/auth/login', { body: { email, password } });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
  return sessionCookie(response);
}

export interface Answered<T = Json> {
  response: JsonResponse<T>;
  /** Attempts that ended without an answer (connection refused or reset) or with 409 request_in_progress. */
  retries: number;
  connectionErrors: number;
}

/**
 * What a well-behaved client does with an Idempotency-Key (D-6): sends the same request again on a connection
 * error (the process died, or is not listening yet) and on 409 request_in_progress (the key's first request is
 * still running or its transaction not yet rolled back), until it gets any other answer or `timeoutMs` ends.
 */
export async function postUntilAnswered<T = Json>(
  baseUrl: string,
  path: string,
  options: { cookie: string; key: string; body: unknown; timeoutMs?: number },
): Promise<Answered<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let retries = 0;
  let connectionErrors = 0;
  for (;;) {
    try {
      const response = await request<T>(baseUrl, path, {
        cookie: options.cookie,
        body: options.body,
        headers: { 'idempotency-key': options.key },
      });
      const inProgress =
        response.status === 409 &&
        (response.body as { error?: { code?: string } })?.error?.code === 'request_in_progress';
      if (!inProgress) return { response, retries, connectionErrors };
    } catch {
      connectionErrors += 1;
    }
    retries += 1;
    if (Date.now() > deadline) throw new Error(`no answer for ${path} (${options.key}) within the deadline`);
    await sleep(50 + Math.random() * 100);
  }
}
