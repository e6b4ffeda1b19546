/**
 * Who did an admin action and from where (C-11), as a plain value a service takes beside its input:
 * an admin user (API or console), a v1 API key, or the service itself (the sweep, provider events).
 */
export type Actor = (
  | { type: 'user'; userId: string; email: string }
  | { type: 'api_key'; apiKeyId: string }
  | { type: 'system' }
  /**
   * An admin user whose session the statement that makes the change checks itself (one round trip for the
   * check and the write, http/route.ts sessionInWrite): who it is is known inside that statement only, so its
   * audit row can only be written there (audit/service.ts auditInsertPart with the session's user).
   */
  | { type: 'session' }
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
  if (actor.type === 'session')
    throw new Error('the user of a session checked in its statement is named in that statement only (auditInsertPart)');
  return 'system';
}

/**
 * A `session` actor as the user its session was found to belong to (checked before the change, not in it); any other as
 * it is.
 */
export function withSessionUser(actor: Actor, user: { userId: string; email: string } | undefined): Actor {
  return actor.type === 'session' && user
    ? { type: 'user', userId: user.userId, email: user.email, requestId: actor.requestId ?? null, ip: actor.ip ?? null }
    : actor;
}
