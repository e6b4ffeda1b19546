import { z } from 'zod';
import { listReply } from '../http/list-reply.ts';
import { defineRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import {
  apiKeyResponse,
  createApiKeyBody,
  createdApiKeyResponse,
  listApiKeysQuery,
  serialiseApiKey,
} from './schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './service.ts';

export const apiKeyRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/api-keys',
    auth: 'admin',
    tag: 'API keys',
    summary: 'Create an API key scoped to one customer; the key is shown only in this answer',
    body: createApiKeyBody,
    responses: {
      201: { description: 'Created', schema: createdApiKeyResponse },
      400: { description: 'invalid_request, customer_not_found' },
    },
    errors: ['customer_not_found'],
    handler: async ({ deps, body, actor }) => {
      const { row, key } = await createApiKey(deps.db, body, actor);
      // The key is shown once: an idempotent replay answers the record without it, never a stored copy.
      return {
        status: 201,
        body: { ...serialiseApiKey(row), key },
        replayBody: { ...serialiseApiKey(row), key: null },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/api-keys',
    auth: 'admin',
    tag: 'API keys',
    summary: 'List API keys (never the key itself)',
    query: listApiKeysQuery,
    responses: { 200: { description: 'Keys', schema: z.array(apiKeyResponse) } },
    errors: [],
    handler: async ({ deps, query, ctx }) =>
      listReply(ctx, await listApiKeys(deps.db, query, query.customerId), serialiseApiKey),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/api-keys/:id',
    auth: 'admin',
    tag: 'API keys',
    summary: 'Revoke an API key; it answers 401 from then on',
    params: idParams,
    responses: { 204: { description: 'Revoked' }, 404: { description: 'not_found' } },
    errors: [],
    handler: async ({ deps, params, actor }) => {
      await revokeApiKey(deps.db, params.id, actor);
      return { status: 204 };
    },
  }),
];
