/**
 * Who did an admin action and from where (C-11), as a plain value a service takes beside its input:
 * an admin user (API or console), a v1 API key, or the service itself (the sweep, provider events).
 * It stands at the ground, below both the HTTP kit (a route's principal becomes one) and audit (which writes it).
 */
export type Actor = (
  | { type: 'user'; userId: string; email: string }
  | { type: 'api_key'; apiKeyId: string }
  | { type: 'system' }
  /** A customer acting on a customer-facing page (K-2): the hosted invoice page's Pay, the portal. */
  | { type: 'customer'; customerId: string }
) & {
  /** The request that carried the action (its X-Request-Id), when one did. */
  requestId?: string | null;
  ip?: string | null;
};

/** The sweep and the other work the service does by itself. */
export const SYSTEM_ACTOR: Actor = { type: 'system' };

/** The `actor` column: what `?actor=` matches besides the user's email. */
export function actorName(actor: Actor): string {
  if (actor.type === 'user') return actor.userId;
  if (actor.type === 'api_key') return `api_key:${actor.apiKeyId}`;
  if (actor.type === 'customer') return `customer:${actor.customerId}`;
  return 'system';
}
