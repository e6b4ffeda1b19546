import type { Actor } from '../actor.ts';

/** Who is calling, as established by the auth middleware. */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'user'; userId: string; email: string; role: string; sessionId: string }
  | { kind: 'apiKey'; apiKeyId: string; customerId: string };

export function requireCustomerScope(principal: Principal): string {
  if (principal.kind !== 'apiKey') throw new Error('route expected an API key principal');
  return principal.customerId;
}

/**
 * The audit log's actor for a principal (C-11): an admin user, a v1 API key, or the service itself for
 * the calls no person makes (the cron endpoint, payment providers).
 */
export function actorOf(
  principal: Principal,
  requestId: string | null | undefined,
  ip: string | null | undefined,
): Actor {
  const from = { requestId: requestId ?? null, ip: ip ?? null };
  if (principal.kind === 'user') return { type: 'user', userId: principal.userId, email: principal.email, ...from };
  if (principal.kind === 'apiKey') return { type: 'api_key', apiKeyId: principal.apiKeyId, ...from };
  return { type: 'system', ...from };
}
