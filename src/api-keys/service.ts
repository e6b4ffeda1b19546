import type { Actor } from '../actor.ts';
import { recordAudits } from '../audit/service.ts';
import type { Db } from '../db/knex.ts';
import { inTransaction } from '../db/knex.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import { assertCustomerExists, customerNotFound } from '../customers/service.ts';
import { AppError, notFound } from '../errors.ts';
import type { PageQuery } from '../db/paginate.ts';
import { insertApiKey, findUsableKey, listApiKeyRows, revokeApiKeyRow, touchApiKey, type ApiKeyRow } from './repo.ts';
import { isForeignKeyViolation } from '../db/errors.ts';

/** Recognisable in logs and secret scanners; 32 random bytes (256 bits) follow it (D-14). */
export const API_KEY_PREFIX = 'bsk_';
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/**
 * A key's fields as the audit log records them (C-11): what identifies it, never the key or its hash.
 * The prefix is what lists show, so an admin can match the entry to the key.
 */
function audited(row: ApiKeyRow): Record<string, unknown> {
  const { id, name, customer_id, prefix, expires_at, revoked_at } = row;
  return { id, name, customer_id, prefix, expires_at, revoked_at };
}

export async function createApiKey(
  db: Db,
  input: { name: string; customerId: string; expiresAt?: Date },
  actor: Actor,
): Promise<{ row: ApiKeyRow; key: string }> {
  await assertCustomerExists(db, input.customerId);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw new AppError('invalid_request', 'expiresAt must be in the future', {
      details: [{ path: 'expiresAt', message: 'must be in the future' }],
    });
  }
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  try {
    const row = await inTransaction(db, async (trx) => {
      const created = await insertApiKey(trx, {
        name: input.name,
        customer_id: input.customerId,
        prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
        key_hash: sha256Hex(key),
        expires_at: input.expiresAt ?? null,
      });
      await recordAudits(trx, actor, [
        {
          action: 'api_key.create',
          targetType: 'api_key',
          targetId: created.id,
          after: audited(created),
        },
      ]);
      return created;
    });
    return { row, key };
  } catch (error) {
    // The customer was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw customerNotFound(input.customerId);
    throw error;
  }
}

export function listApiKeys(db: Db, page: PageQuery, customerId?: string) {
  return listApiKeyRows(db, page, customerId);
}

/** Revokes an unrevoked key with its audit row; not_found for an unknown or already revoked key (nothing recorded). */
export async function revokeApiKey(db: Db, id: string, actor: Actor): Promise<ApiKeyRow> {
  return inTransaction(db, async (trx) => {
    const revoked = await revokeApiKeyRow(trx, id);
    if (!revoked) throw notFound('API key');
    await recordAudits(trx, actor, [
      {
        action: 'api_key.revoke',
        targetType: 'api_key',
        targetId: id,
        before: { revoked_at: null },
        after: { revoked_at: revoked.revoked_at },
      },
    ]);
    return revoked;
  });
}

// Per process: skip the conditional UPDATE entirely while this process touched the key < 1 min ago.
const recentlyTouched = new Map<string, number>();

/** The customer a bearer key acts for, or undefined for an unknown, revoked or expired key. */
export async function authenticateApiKey(
  db: Db,
  key: string,
): Promise<{ apiKeyId: string; customerId: string } | undefined> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined;
  const row = await findUsableKey(db, sha256Hex(key));
  if (!row) return undefined;
  const now = Date.now();
  if ((recentlyTouched.get(row.id) ?? 0) < now - 60_000) {
    recentlyTouched.set(row.id, now);
    if (recentlyTouched.size > 10_000) recentlyTouched.clear();
    await touchApiKey(db, row.id);
  }
  return { apiKeyId: row.id, customerId: row.customer_id };
}
