import { z } from 'zod';
import { iso, nameText, pageQuery, timestampInput, uuid } from '../http/schemas.ts';
import type { ApiKeyRow } from './repo.ts';
import { EXAMPLE_ID } from '../http/example-ids.ts';

export const createApiKeyBody = z
  .object({
    name: nameText(200),
    customerId: uuid,
    expiresAt: timestampInput.optional().meta({ description: 'In the future' }),
  })
  .meta({ examples: [{ name: 'Acme production', customerId: EXAMPLE_ID.customer, expiresAt: '2030-01-01' }] });

export const listApiKeysQuery = pageQuery.extend({ customerId: uuid.optional() });

/** The key the document shows as an example; its create answer adds the key itself. */
const API_KEY_EXAMPLE = {
  id: EXAMPLE_ID.apiKey,
  name: 'Acme production',
  customerId: EXAMPLE_ID.customer,
  prefix: 'sk_live_4f9a',
  expiresAt: '2030-01-01T00:00:00.000Z',
  revokedAt: null,
  lastUsedAt: null,
  createdAt: '2026-01-05T09:30:00.000Z',
};

export const apiKeyResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    customerId: z.uuid(),
    prefix: z.string(),
    expiresAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ examples: [API_KEY_EXAMPLE] });
export const createdApiKeyResponse = apiKeyResponse.extend({ key: z.string() }).meta({
  examples: [{ ...API_KEY_EXAMPLE, key: 'sk_live_4f9a2c7e1b8d4a6f9e3c5b7a1d2e4f6a' }],
});

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
