import { z } from 'zod';
import { iso, nameText, pageQuery, timestampInput, uuid } from '../http/schemas.ts';
import type { ApiKeyRow } from './repo.ts';

export const createApiKeyBody = z.object({
  name: nameText(200),
  customerId: uuid,
  expiresAt: timestampInput.optional(),
});

export const listApiKeysQuery = pageQuery.extend({ customerId: uuid.optional() });

export const apiKeyResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  customerId: z.uuid(),
  prefix: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});
export const createdApiKeyResponse = apiKeyResponse.extend({ key: z.string() });

export function serialiseApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    customerId: row.customer_id,
    prefix: row.prefix,
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
    createdAt: iso(row.created_at)!,
  };
}
